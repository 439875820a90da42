import Foundation
import KioskCore
import Testing

@testable import KioskServer

/// `POST /v1/deliveries` against the real server: an installation reports a product version it installed, vouched for
/// by the grant token that opened it.
@Suite("Server: delivery reports", .serialized, .timeLimit(.minutes(3)))
struct DeliveryReportTests {
    typealias Sample = TestServer.Sample

    func error(_ response: RawHTTPResponse) throws -> APIErrorEnvelope.Body {
        try KioskJSON.decode(APIErrorEnvelope.self, from: response.body).error
    }

    /// Posts `body` (raw bytes) to `/v1/deliveries` with `token` as a bearer, if any.
    func report(_ server: TestServer, body: Data, token: String?) async throws -> RawHTTPResponse {
        var headers = [("Content-Type", "application/json")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        return try await server.send("POST", "/v1/deliveries", headers: headers, body: body)
    }

    /// Reports `grant`'s product version (or what `productID` and `version` say instead) from `installation`.
    func report(
        _ server: TestServer, _ grant: Grant, productID: String? = nil, version: String? = nil,
        installation: String = TestServer.installationID
    ) async throws -> RawHTTPResponse {
        let body = DeliveryReportRequest(
            productID: productID ?? grant.productID, contentVersion: version ?? grant.contentVersion,
            installationID: installation)
        return try await report(server, body: try KioskJSON.encode(body), token: grant.token)
    }

    func status(_ response: RawHTTPResponse) throws -> DeliveryReportResponse.Status {
        guard response.status == 200 else {
            throw TestServerError.unexpected(status: response.status, body: response.text)
        }
        return try KioskJSON.decode(DeliveryReportResponse.self, from: response.body).status
    }

    @Test func aReportIsKeptOncePerPurchaseProductVersionAndInstallation() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(Sample.book)
            let grant = try await server.grant(Sample.book, receipt: purchase.receiptData)
            #expect(try status(try await report(server, grant)) == .recorded)
            #expect(try status(try await report(server, grant)) == .alreadyRecorded)
            // Another grant of the same purchase, from the same installation: the same delivery.
            let again = try await server.grant(Sample.book, receipt: purchase.receiptData)
            #expect(try status(try await report(server, again)) == .alreadyRecorded)
            #expect(try status(try await report(server, grant, installation: "phone-2")) == .recorded)
            let kept = try await server.server.ledger.deliveries(
                originalTransactionID: purchase.originalTransactionID, productID: Sample.book)
            #expect(kept.map(\.installationID) == [TestServer.installationID, "phone-2"])
            #expect(kept.allSatisfy { $0.transactionID == purchase.transactionID })
            #expect(kept.allSatisfy { $0.contentVersion == grant.contentVersion })
        }
    }

    @Test func badBodiesAreRefusedWithTheErrorEnvelope() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(Sample.book)
            let grant = try await server.grant(Sample.book, receipt: purchase.receiptData)
            let version = grant.contentVersion
            let bodies: [String] = [
                "", "not json", "[]", #"{"product_id":"\#(Sample.book)","content_version":"\#(version)"}"#,
                #"{"product_id":7,"content_version":"\#(version)","installation_id":"a"}"#,
                #"{"product_id":"../x","content_version":"\#(version)","installation_id":"a"}"#,
                #"{"product_id":"\#(Sample.book)","content_version":"1/2","installation_id":"a"}"#,
                #"{"product_id":"\#(Sample.book)","content_version":"\#(version)","installation_id":"a b"}"#,
                #"{"product_id":"\#(Sample.book)","content_version":"\#(version)","installation_id":""}"#,
            ]
            for body in bodies {
                let refused = try await report(server, body: Data(body.utf8), token: grant.token)
                #expect(refused.status == 400, "\(body)")
                #expect(try error(refused).code == "bad_request", "\(body)")
            }
            let valid = try KioskJSON.encode(
                DeliveryReportRequest(
                    productID: Sample.book, contentVersion: version, installationID: TestServer.installationID))
            let missing = try await report(server, body: valid, token: nil)
            #expect(missing.status == 401)
            #expect(try error(missing).code == "token_missing")
            let forged = try await report(server, body: valid, token: grant.token + "x")
            #expect(try error(forged).code == "token_invalid")
            #expect(
                try await server.server.ledger.deliveries(
                    originalTransactionID: purchase.originalTransactionID, productID: Sample.book
                ).isEmpty)
        }
    }

    @Test func aTokenVouchesOnlyForItsOwnProductAndVersion() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(Sample.book)
            _ = try await server.buy(Sample.magazine)
            let grant = try await server.grant(Sample.book, receipt: purchase.receiptData)
            for refused in [
                try await report(server, grant, productID: Sample.magazine),
                try await report(server, grant, version: grant.contentVersion + ".1"),
            ] {
                #expect(refused.status == 403)
                #expect(try error(refused).code == "token_scope")
            }
        }
    }

    @Test func aRevokedPurchaseReportsNothing() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(Sample.book)
            let grant = try await server.grant(Sample.book, receipt: purchase.receiptData)
            _ = try await server.notify(purchase.transactionID, .refund)
            let refused = try await report(server, grant)
            #expect(refused.status == 403)
            #expect(try error(refused).code == "transaction_revoked")
            #expect(
                try await server.server.ledger.deliveries(
                    originalTransactionID: purchase.originalTransactionID, productID: Sample.book
                ).isEmpty)
        }
    }

    @Test func anExpiredTokenVouchesForAWeek() async throws {
        let clock = TestServer.manualClock()
        try await TestServer.with(configure: { $0.clock = clock }) { server in
            let purchase = try await server.buy(Sample.book)
            let grant = try await server.grant(Sample.book, receipt: purchase.receiptData)
            clock.set(grant.expiresAt.addingTimeInterval(60))
            #expect(try status(try await report(server, grant)) == .recorded)
            clock.set(grant.expiresAt.addingTimeInterval(DeliveryService.expiredTokenGrace.timeInterval - 1))
            #expect(try status(try await report(server, grant, installation: "phone-2")) == .recorded)
            clock.set(grant.expiresAt.addingTimeInterval(DeliveryService.expiredTokenGrace.timeInterval))
            let refused = try await report(server, grant, installation: "phone-3")
            #expect(refused.status == 401)
            #expect(try error(refused).code == "token_expired")
        }
    }
}
