import Foundation
import KioskCore
import KioskKit
import Testing

@testable import KioskServer

/// StoreKit 2 signed transactions, App Store Server Notifications, subscriptions that unlock issues and the
/// installation cap, against the real server and its sandbox store.
@Suite("Server: StoreKit 2 and notifications", .serialized, .timeLimit(.minutes(3)))
struct StoreKit2Tests {
    typealias Sample = TestServer.Sample

    func error(_ response: RawHTTPResponse) throws -> APIErrorEnvelope.Body {
        try KioskJSON.decode(APIErrorEnvelope.self, from: response.body).error
    }

    func signed(_ purchase: SandboxPurchaseResponse) throws -> PurchaseProof {
        .signedTransaction(try #require(purchase.signedTransaction))
    }

    func range(_ server: TestServer, _ file: GrantFile, token: String) async throws -> RawHTTPResponse {
        try await server.send(
            "GET", file.url, headers: [("Authorization", "Bearer \(token)"), ("Range", "bytes=0-99")])
    }

    @Test func aSignedTransactionGrantsAndDownloads() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(Sample.book)
            let grant = try await server.grant(Sample.book, proof: try signed(purchase))
            #expect(grant.productID == Sample.book)
            let file = try #require(grant.files.first)
            let response = try await range(server, file, token: grant.token)
            #expect(response.status == 206)
            #expect(response.body.count == min(100, Int(file.length)))
            let verified = try await server.postJSON(
                "/v1/receipts/verify", ReceiptVerificationRequest(proof: try signed(purchase)),
                as: EntitlementsResponse.self)
            #expect(verified.environment == "Sandbox")
            #expect(verified.entitlements.map(\.productID) == [Sample.book])
            #expect(try await server.server.ledger.transaction(id: purchase.transactionID) != nil)
        }
    }

    @Test func badSignedTransactionsAreRefusedWithAReason() async throws {
        try await TestServer.with { server in
            let jws = try #require(try await server.buy(Sample.book).signedTransaction)
            let parts = jws.split(separator: ".").map(String.init)
            var payload =
                try JSONSerialization.jsonObject(with: try #require(Base64URL.decode(Substring(parts[1]))))
                as! [String: Any]
            payload["productId"] = Sample.levels
            let forged = Base64URL.encode(try JSONSerialization.data(withJSONObject: payload))
            let header = Base64URL.encode(Data(#"{"alg":"none"}"#.utf8))
            for (text, reason) in [
                ([parts[0], forged, parts[2]].joined(separator: "."), "signature"),
                ([header, parts[1], ""].joined(separator: "."), "algorithm"),
                ("garbage", "malformed"),
            ] {
                let response = try await server.post(
                    "/v1/downloads",
                    GrantRequest(
                        proof: .signedTransaction(text), productID: Sample.levels,
                        installationID: TestServer.installationID))
                #expect(response.status == 403)
                let body = try error(response)
                #expect(body.code == "transaction_invalid")
                #expect(body.reason == reason)
            }
            let both = try await server.send(
                "POST", "/v1/downloads",
                body: Data(#"{"receipt-data": "x", "signed_transaction": "y", "product_id": "a.b"}"#.utf8))
            #expect(both.status == 400)
            #expect(try error(both).message.contains("not both"))
        }
    }

    /// The root certificate of a signed transaction, the last of its header's `x5c`, as PEM.
    static func rootPEM(of jws: String) throws -> String {
        var header = String(try #require(jws.split(separator: ".").first))
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        header += String(repeating: "=", count: (4 - header.count % 4) % 4)
        struct Header: Decodable { var x5c: [String] }
        let fields = try JSONDecoder().decode(Header.self, from: try #require(Data(base64Encoded: header)))
        let der = try #require(fields.x5c.last)
        let lines = stride(from: 0, to: der.count, by: 64).map {
            String(der.dropFirst($0).prefix(64))
        }
        return (["-----BEGIN CERTIFICATE-----"] + lines + ["-----END CERTIFICATE-----", ""]).joined(separator: "\n")
    }

    @Test func appleRootCAReplacesTheTrustedRoot() async throws {
        // Server A's sandbox store signs a transaction with its own chain.
        let (jws, rootPEM): (String, String) = try await TestServer.with { a in
            let purchase = try await a.buy(Sample.book)
            let jws = try #require(purchase.signedTransaction)
            return (jws, try Self.rootPEM(of: jws))
        }
        let pem = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-root-\(UUID().uuidString).pem")
        try rootPEM.write(to: pem, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: pem) }
        // Server B trusts A's root through --apple-root-ca: A's transaction grants.
        try await TestServer.with(configure: { $0.appleRootCAFile = pem }) { b in
            _ = try await b.grant(Sample.book, proof: .signedTransaction(jws))
        }
        // Server C trusts Apple Root CA - G3 and its own sandbox root only.
        try await TestServer.with { c in
            let response = try await c.post(
                "/v1/downloads",
                GrantRequest(
                    proof: .signedTransaction(jws), productID: Sample.book, installationID: TestServer.installationID))
            #expect(try error(response).reason == "untrusted_root")
        }
        // A root file without a certificate stops the server from starting.
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kiosk-empty-\(UUID().uuidString).pem")
        try Data("not a certificate\n".utf8).write(to: empty)
        defer { try? FileManager.default.removeItem(at: empty) }
        await #expect(throws: (any Error).self) {
            try await TestServer.with(configure: { $0.appleRootCAFile = empty }) { _ in }
        }
    }

    @Test func configurationReadsTheEnvironment() throws {
        var configuration = ServerConfiguration()
        #expect(configuration.acceptedTransactionEnvironments == ["Sandbox"])
        configuration.store = .appstore
        #expect(configuration.acceptedTransactionEnvironments == ["Production", "Sandbox"])
        configuration = try ServerConfiguration(
            options: [:],
            environment: [
                "KIOSK_APPLE_ROOT_CA": "/etc/roots.pem", "KIOSK_TRANSACTION_ENVIRONMENTS": "Production",
                "KIOSK_MAX_INSTALLATIONS": "3",
            ])
        #expect(configuration.appleRootCAFile?.path == "/etc/roots.pem")
        #expect(configuration.acceptedTransactionEnvironments == ["Production"])
        #expect(configuration.maxInstallations == 3)
    }

    @Test func anEnvironmentTheServerDoesNotAcceptIsRefused() async throws {
        try await TestServer.with(configure: { $0.transactionEnvironments = ["Production"] }) { server in
            let purchase = try await server.buy(Sample.book)
            let response = try await server.post(
                "/v1/downloads",
                GrantRequest(
                    proof: try signed(purchase), productID: Sample.book, installationID: TestServer.installationID))
            #expect(response.status == 403)
            #expect(try error(response).reason == "environment")
        }
    }

    @Test func aRefundNotificationRevokesALiveDownload() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(Sample.magazine)
            let grant = try await server.grant(Sample.magazine, proof: try signed(purchase))
            let file = try #require(grant.files.first)
            #expect(try await range(server, file, token: grant.token).status == 206)

            let refund = try await server.notify(purchase.transactionID, .refund)
            #expect(refund.result?.notificationType == "REFUND")
            #expect(refund.result?.outcome == .applied)

            let refused = try await range(server, file, token: grant.token)
            #expect(refused.status == 403)
            #expect(try error(refused).code == "transaction_revoked")
            // No new grant either, with either proof.
            let again = try await server.post(
                "/v1/downloads",
                GrantRequest(
                    proof: try signed(purchase), productID: Sample.magazine, installationID: TestServer.installationID))
            #expect(again.status == 403)
            #expect(try error(again).code == "not_entitled")
            let byReceipt = try await server.post(
                "/v1/downloads",
                GrantRequest(
                    proof: .receipt(purchase.receiptData), productID: Sample.magazine,
                    installationID: TestServer.installationID))
            #expect(try error(byReceipt).code == "not_entitled")
            // The App Store resending the same notification changes nothing.
            let resent = try await server.postJSON(
                "/v1/notifications/appstore", ["signedPayload": refund.signedPayload], as: NotificationResult.self)
            #expect(resent.outcome == .duplicate)
            // A notification that does not verify is refused.
            let forged = try await server.post("/v1/notifications/appstore", ["signedPayload": "a.b.c"])
            #expect(forged.status == 403)
            #expect(try error(forged).code == "transaction_invalid")
            let metrics = try await server.send("GET", "/metrics").text
            #expect(metrics.contains("kiosk_revoked_token_refusals_total"))
            #expect(metrics.contains("kiosk_notifications_total"))
        }
    }

    @Test func aRevocationSurvivesARestart() async throws {
        let purchaseAndToken: (SandboxPurchaseResponse, Grant, URL, URL) = try await TestServer.with { server in
            let purchase = try await server.buy(Sample.magazine)
            let grant = try await server.grant(Sample.magazine, proof: try signed(purchase))
            _ = try await server.notify(purchase.transactionID, .revoke)
            let data = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-kept-\(UUID().uuidString)")
            try FileManager.default.copyItem(at: server.dataDirectory, to: data)
            return (purchase, grant, data, server.contentDirectory)
        }
        let (_, grant, data, _) = purchaseAndToken
        defer { try? FileManager.default.removeItem(at: data) }
        try await TestServer.with(configure: { $0.dataDirectory = data }) { server in
            let file = try #require(grant.files.first)
            let refused = try await range(server, file, token: grant.token)
            #expect(try error(refused).code == "transaction_revoked")
        }
    }

    @Test func renewalAndExpiryMoveTheSubscriptionWindowAndTheIssuesItUnlocks() async throws {
        let clock = TestServer.manualClock()
        try await TestServer.with(configure: { $0.clock = clock }) { server in
            let subscription = try await server.buy(Sample.subscription)
            let start = subscription.purchaseDate
            let period = try #require(subscription.expiresDate).timeIntervalSince(start)
            // An issue published a second into the first period, and one in the next period.
            let early = "com.example.kiosk.magazine.test-early"
            let later = "com.example.kiosk.magazine.test-later"
            try server.publishIssue(
                early, at: Date(timeIntervalSince1970: (start.timeIntervalSince1970 + 1).rounded(.up)))
            try server.publishIssue(later, at: start.addingTimeInterval(period + 86_400))
            await server.reloadCatalog()
            let proof = try signed(subscription)

            _ = try await server.grant(early, proof: proof)
            let outside = try await server.post(
                "/v1/downloads", GrantRequest(proof: proof, productID: later, installationID: TestServer.installationID)
            )
            #expect(try error(outside).code == "not_entitled")
            #expect(try error(outside).message.contains("outside every paid period"))

            let renewal = try await server.notify(subscription.transactionID, .renew)
            #expect(renewal.result?.notificationType == "DID_RENEW")
            // The app's original signed transaction now unlocks the later issue: the ledger knows the renewal.
            _ = try await server.grant(later, proof: proof)

            // Expiry ends the latest period (the renewal) now: the later issue is locked again.
            let expiry = try await server.notify(subscription.transactionID, .expire)
            #expect(expiry.result?.notificationType == "EXPIRED")
            let locked = try await server.post(
                "/v1/downloads", GrantRequest(proof: proof, productID: later, installationID: TestServer.installationID)
            )
            #expect(try error(locked).code == "not_entitled")

            // Once the first period ends too, the subscription is over, but the early issue stays available.
            clock.advance(by: 2.1)
            _ = try await server.notify(subscription.transactionID, .expire)
            let over = try await server.post(
                "/v1/downloads",
                GrantRequest(proof: proof, productID: Sample.subscription, installationID: TestServer.installationID))
            #expect(try error(over).code == "not_entitled")
            _ = try await server.grant(early, proof: proof)
            let restored = try await server.postJSON(
                "/v1/receipts/verify", ReceiptVerificationRequest(proof: proof), as: EntitlementsResponse.self)
            let ids = restored.entitlements.map(\.productID)
            #expect(ids.contains(early) && !ids.contains(later) && !ids.contains(Sample.subscription))
            #expect(restored.entitlements.first { $0.productID == early }?.expiresDate == nil)
        }
    }

    @Test func aGracePeriodKeepsTheSubscriptionOpen() async throws {
        try await TestServer.with { server in
            let subscription = try await server.buy(Sample.subscription)
            let proof = try signed(subscription)
            let issue = "com.example.kiosk.magazine.test-grace"
            let grace = try await server.notify(subscription.transactionID, .gracePeriod, graceDays: 3)
            #expect(grace.result?.subtype == "GRACE_PERIOD")
            // Published after the failed renewal, inside the grace period.
            try server.publishIssue(issue, at: Date().addingTimeInterval(86_400))
            await server.reloadCatalog()
            _ = try await server.grant(issue, proof: proof)
            _ = try await server.notify(subscription.transactionID, .expire)
            let closed = try await server.post(
                "/v1/downloads", GrantRequest(proof: proof, productID: issue, installationID: TestServer.installationID)
            )
            #expect(try error(closed).code == "not_entitled")
        }
    }

    @Test func installationCapsHold() async throws {
        try await TestServer.with(configure: { $0.maxInstallations = 2 }) { server in
            let purchase = try await server.buy(Sample.book)
            let proof = try signed(purchase)
            _ = try await server.grant(Sample.book, proof: proof, installationID: "install-a")
            _ = try await server.grant(Sample.book, proof: proof, installationID: "install-b")
            let third = try await server.post(
                "/v1/downloads",
                GrantRequest(proof: .receipt(purchase.receiptData), productID: Sample.book, installationID: "install-c")
            )
            #expect(third.status == 403)
            #expect(try error(third).code == "installation_limit")
            _ = try await server.grant(Sample.book, proof: proof, installationID: "install-a")
            let bad = try await server.post(
                "/v1/downloads", GrantRequest(proof: proof, productID: Sample.book, installationID: "../../x"))
            #expect(bad.status == 400)
            let metrics = try await server.send("GET", "/metrics").text
            #expect(metrics.contains("kiosk_installation_limit_refusals_total 1"))
            #expect(metrics.contains(#"kiosk_grants_refused_total{reason="installation_limit"} 1"#))
        }
    }

    @Test func kioskKitDownloadsWithASignedTransaction() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(Sample.levels)
            let root = server.makeScratchDirectory()
            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            try await client.enqueue(productID: Sample.levels, proof: try signed(purchase))
            let content = try await client.waitUntilInstalled(productID: Sample.levels)
            #expect(content.files.count == 10)
            let installationID = client.installationID
            #expect(UUID(uuidString: installationID) != nil)
            await client.close()
            let reopened = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            #expect(reopened.installationID == installationID)
            let restored = try await reopened.verify(try signed(purchase))
            #expect(restored.entitlements.map(\.productID) == [Sample.levels])
            await reopened.close()
        }
    }
}
