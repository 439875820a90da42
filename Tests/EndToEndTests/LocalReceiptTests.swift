import Foundation
import KioskCore
import Testing

@testable import KioskServer

/// `--receipt-validation api` against the real server: App Store receipts read and verified locally (no
/// `verifyReceipt`: the server here reaches no network), forged ones refused, Xcode receipts only with their local
/// testing root. The receipts are real ones (Fixtures/apple, with their expected reading in expected.json).
@Suite("Server: app receipts read locally", .serialized, .timeLimit(.minutes(2)))
struct LocalReceiptTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("KioskServerTests/Fixtures/apple")

    static func receipt(_ path: String) throws -> String {
        try String(contentsOf: fixtures.appendingPathComponent(path), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func configure(bundleID: String, localTestingRoot: URL? = nil) -> (inout ServerConfiguration) -> Void {
        { configuration in
            configuration.store = .appstore
            configuration.bundleID = bundleID
            configuration.receiptValidation = .api
            configuration.receiptLocalTestingRoot = localTestingRoot
        }
    }

    static func verify(_ server: TestServer, _ receipt: String) async throws -> RawHTTPResponse {
        try await server.post("/v1/receipts/verify", ReceiptVerificationRequest(proof: .receipt(receipt)))
    }

    static func reason(_ response: RawHTTPResponse) throws -> (code: String, reason: String?) {
        let body = try KioskJSON.decode(APIErrorEnvelope.self, from: response.body).error
        return (body.code, body.reason)
    }

    @Test func anAppStoreReceiptIsReadLocallyAndAForgedOneRefused() async throws {
        let receipt = try Self.receipt("TPInAppReceipt/receipt-production")
        try await TestServer.with(configure: Self.configure(bundleID: "org.getpure.pure-iphone")) { server in
            let read = try await Self.verify(server, receipt)
            #expect(read.status == 200, "\(read.text)")
            let answer = try KioskJSON.decode(EntitlementsResponse.self, from: read.body)
            #expect(answer.environment == "Production")
            // Its in-app purchases are in the ledger now, as the receipt lists them.
            let recorded = try #require(try await server.server.ledger.transaction(id: "340001196262039"))
            #expect(recorded.productID == "org.getpure.pure.Week" && recorded.environment == "Production")

            // One byte of the signed content changed: the signature no longer matches.
            var der = try #require(Data(base64Encoded: receipt))
            let index = try #require(der.range(of: Data("org.getpure.pure.Week".utf8))?.lowerBound)
            der[index] ^= 0x01
            let forged = try await Self.verify(server, der.base64EncodedString())
            #expect(forged.status == 403)
            #expect(try Self.reason(forged) == ("receipt_invalid", "signature_invalid"))
            // Not a receipt at all.
            let garbage = try await Self.verify(server, Data("not a receipt".utf8).base64EncodedString())
            #expect(garbage.status == 400)
            #expect(try Self.reason(garbage).code == "receipt_malformed")
        }
    }

    @Test func aReceiptOfAnotherAppIsRefused() async throws {
        let receipt = try Self.receipt("TPInAppReceipt/receipt-production")
        try await TestServer.with(configure: Self.configure(bundleID: "com.acme.newsstand")) { server in
            let refused = try await Self.verify(server, receipt)
            #expect(refused.status == 403)
            #expect(try Self.reason(refused) == ("receipt_invalid", "wrong_bundle"))
        }
    }

    @Test func anXcodeReceiptNeedsItsLocalTestingRoot() async throws {
        let receipt = try Self.receipt("TPInAppReceipt/receipt-xcode-with-purchases")
        let bundleID = "com.example.naturelab.backyardbirds.example"
        try await TestServer.with(configure: Self.configure(bundleID: bundleID)) { server in
            let refused = try await Self.verify(server, receipt)
            #expect(refused.status == 403)
            #expect(try Self.reason(refused) == ("receipt_invalid", "untrusted_chain"))
        }
        let root = Self.fixtures.appendingPathComponent("StoreKitTestCertificate.pem")
        try await TestServer.with(configure: Self.configure(bundleID: bundleID, localTestingRoot: root)) { server in
            let read = try await Self.verify(server, receipt)
            #expect(read.status == 200, "\(read.text)")
            #expect(try KioskJSON.decode(EntitlementsResponse.self, from: read.body).environment == "Sandbox")
        }
    }
}
