import Foundation
import KioskCore
import KioskKit
import KioskServerTestSupport
import Logging
import Testing

@testable import KioskServer

/// `CONSUMPTION_REQUEST` notifications answered from Kiosk's delivery records: the real server, its sandbox store
/// (which sends the request and records the answer its App Store Server API receives) and the real KioskKit, which
/// reports the installs.
@Suite("Server: consumption answers", .serialized, .timeLimit(.minutes(3)))
struct ConsumptionRequestTests {
    typealias Sample = TestServer.Sample

    /// The sample level pack, sold as a consumable.
    static func levelsAsConsumable(_ content: URL) throws {
        let info = content.appendingPathComponent(Sample.levels).appendingPathComponent("Info.json")
        let text = try String(contentsOf: info, encoding: .utf8)
        try text.replacingOccurrences(of: #""non_consumable""#, with: #""consumable""#)
            .write(to: info, atomically: true, encoding: .utf8)
    }

    /// The consumption answers the sandbox store received about `transactionID`.
    func answers(_ server: TestServer, _ transactionID: String) async throws -> [SandboxConsumptionAnswers.Answer] {
        let response = try await server.send("GET", "/sandbox/consumption/\(transactionID)")
        guard response.status == 200 else {
            throw TestServerError.unexpected(status: response.status, body: response.text)
        }
        let list = try KioskJSON.decode(SandboxConsumptionAnswers.self, from: response.body)
        #expect(list.transactionID == transactionID)
        return list.answers
    }

    @Test func aPurchaseKioskKitInstalledIsAnsweredDelivered() async throws {
        try await TestServer.with(
            prepareContent: Self.levelsAsConsumable,
            configure: {
                $0.consumptionInfo = true
                $0.refundPreference = .grantProrated
                $0.sampleContentProvided = true
            }
        ) { server in
            let purchase = try await server.buy(Sample.levels)
            let client = try await KioskKitTestSupport.makeClient(server.baseURL, root: server.makeScratchDirectory())
            try await client.enqueue(productID: Sample.levels, receipt: purchase.receiptData)
            let content = try await client.waitUntilInstalled(productID: Sample.levels)
            #expect(try await client.sendDeliveryReports() == 0)
            let deliveries = try await server.server.ledger.deliveries(
                originalTransactionID: purchase.originalTransactionID, productID: Sample.levels)
            #expect(deliveries.map(\.installationID) == [client.installationID])
            #expect(deliveries.map(\.contentVersion) == [content.version])
            await client.close()

            let request = try await server.notify(purchase.transactionID, .consumptionRequest)
            #expect(request.result?.notificationType == "CONSUMPTION_REQUEST")
            #expect(request.result?.outcome == .applied)
            let received = try await answers(server, purchase.transactionID)
            let answer = try #require(received.first)
            #expect(received.count == 1)
            #expect(answer.customerConsented)
            #expect(answer.deliveryStatus == "DELIVERED")
            #expect(answer.consumptionPercentage == 100_000)
            #expect(answer.refundPreference == "GRANT_PRORATED")
            #expect(answer.sampleContentProvided)
            let recorded = try await server.server.ledger.consumptionAnswers(transactionID: purchase.transactionID)
            #expect(recorded.count == 1)
            #expect(recorded.first?.failure == nil)
            #expect(recorded.first?.notificationUUID == request.result?.notificationUUID)
            let body = try #require(recorded.first?.body)
            #expect(
                try JSONDecoder().decode(AppStoreConsumptionRequestBody.self, from: Data(body.utf8))
                    == AppStoreConsumptionRequestBody(
                        customerConsented: true, consumptionPercentage: 100_000, deliveryStatus: "DELIVERED",
                        refundPreference: "GRANT_PRORATED", sampleContentProvided: true))
            #expect(try await server.metric(#"kiosk_app_store_api_calls_total{call="consumption",outcome="ok"}"#) == 1)

            // The App Store resending the request: a duplicate, not answered again.
            let resent = try await server.postJSON(
                "/v1/notifications/appstore", ["signedPayload": request.signedPayload], as: NotificationResult.self)
            #expect(resent.outcome == .duplicate)
            #expect(try await answers(server, purchase.transactionID).count == 1)
        }
    }

    @Test func aPurchaseNeverDownloadedIsAnsweredUndelivered() async throws {
        try await TestServer.with(configure: {
            $0.consumptionInfo = true
            $0.refundPreference = .grantProrated
        }) { server in
            let purchase = try await server.buy(Sample.book)
            let other = try await server.buy(Sample.magazine)
            // A delivery of another purchase says nothing of this one.
            let grant = try await server.grant(Sample.magazine, receipt: other.receiptData)
            _ = try await server.post(
                "/v1/deliveries",
                DeliveryReportRequest(
                    productID: Sample.magazine, contentVersion: grant.contentVersion,
                    installationID: TestServer.installationID))
            let request = try await server.notify(purchase.transactionID, .consumptionRequest)
            #expect(request.result?.outcome == .applied)
            let received = try await answers(server, purchase.transactionID)
            #expect(
                received.map { [$0.deliveryStatus, $0.refundPreference ?? "none"] } == [["UNDELIVERED_OTHER", "none"]])
            #expect(received.first?.consumptionPercentage == nil)
            #expect(received.first?.customerConsented == true)
            #expect(received.first?.sampleContentProvided == false)
        }
    }

    @Test func withoutConsumptionInfoARequestIsOnlyLogged() async throws {
        let log = LogRecorder(level: .info)
        try await TestServer.with(logger: log.logger) { server in
            let purchase = try await server.buy(Sample.book)
            let grant = try await server.grant(Sample.book, receipt: purchase.receiptData)
            _ = try await server.send(
                "POST", "/v1/deliveries",
                headers: [("Content-Type", "application/json"), ("Authorization", "Bearer \(grant.token)")],
                body: try KioskJSON.encode(
                    DeliveryReportRequest(
                        productID: Sample.book, contentVersion: grant.contentVersion,
                        installationID: TestServer.installationID)))
            let request = try await server.notify(purchase.transactionID, .consumptionRequest)
            #expect(request.result?.outcome == .applied)
            #expect(try await answers(server, purchase.transactionID).isEmpty)
            #expect(try await server.server.ledger.consumptionAnswers(transactionID: purchase.transactionID).isEmpty)
            let notices = log.entries.filter { $0.message.hasPrefix("consumption request not answered") }
            #expect(notices.map(\.level) == [.notice])
            #expect(notices.first?.message.contains("--consumption-info") == true)
            #expect(notices.first?.metadata["product"] == "\(Sample.book)")
            // Nothing secret in the log: no token, no signed payload.
            let logged = log.entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
            #expect(!logged.contains(grant.token))
            #expect(!logged.contains(request.signedPayload))
        }
    }
}

/// Apple's consumption body as plain JSON, to read what the ledger kept without the server's types.
private struct AppStoreConsumptionRequestBody: Codable, Hashable {
    var customerConsented: Bool
    var consumptionPercentage: Int?
    var deliveryStatus: String
    var refundPreference: String?
    var sampleContentProvided: Bool
}
