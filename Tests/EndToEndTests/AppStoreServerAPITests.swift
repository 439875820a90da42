import Crypto
import Foundation
import KioskCore
import KioskKit
import KioskServerTestSupport
import Logging
import Synchronization
import Testing

@testable import KioskServer

/// The App Store Server API at work, against the real server and its sandbox store's API (in process, or over
/// HTTP behind ``AppStoreAPIGate`` to script Apple's failures): restore from history, refunds caught up after
/// downtime, lookups at grant time, and what Kiosk does when Apple is unreachable, rate-limits or refuses the key.
@Suite("Server: App Store Server API", .serialized, .timeLimit(.minutes(3)))
struct AppStoreServerAPITests {
    typealias Sample = TestServer.Sample

    static func signed(_ purchase: SandboxPurchaseResponse) throws -> PurchaseProof {
        .signedTransaction(try #require(purchase.signedTransaction))
    }

    static func errorCode(_ response: RawHTTPResponse) throws -> String {
        try KioskJSON.decode(APIErrorEnvelope.self, from: response.body).error.code
    }

    static func range(_ server: TestServer, _ grant: Grant) async throws -> RawHTTPResponse {
        let file = try #require(grant.files.first)
        return try await server.send(
            "GET", file.url, headers: [("Authorization", "Bearer \(grant.token)"), ("Range", "bytes=0-9")])
    }

    static func restore(_ server: TestServer, _ purchase: SandboxPurchaseResponse) async throws -> Set<String> {
        let answer = try await server.postJSON(
            "/v1/receipts/verify", ReceiptVerificationRequest(proof: try signed(purchase)),
            as: EntitlementsResponse.self)
        return Set(answer.entitlements.map(\.productID))
    }

    /// Polls `condition` every 50 ms, at most `limit` times (a bounded wait for work the server does on its own).
    static func eventually(limit: Int = 600, _ condition: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<limit {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    @Test func restoreReadsTheWholeHistoryAcrossPagesAndARevisionPicksUpALaterRefund() async throws {
        try await TestServer.with { server in
            // The customer's purchases in the order they change: the refunded book, then three more, then a renewal
            // and the levels: more than a page of 4, and the levels only on the second.
            let magazine = try await server.buy(Sample.magazine, user: "ann")
            let book = try await server.buy(Sample.book, user: "ann")
            try await server.refund(book.transactionID)
            let subscription = try await server.buy(Sample.subscription, user: "ann")
            _ = try await server.notify(subscription.transactionID, .renew)
            let levels = try await server.buy(Sample.levels, user: "ann")
            let others = try await server.buy(Sample.book, user: "bob")

            // KioskKit restores from the magazine's signed transaction alone and downloads what is missing.
            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: server.makeScratchDirectory())
            let restored = try await client.restore(proof: try Self.signed(magazine))
            let products = Set(restored.entitlements.map(\.productID))
            #expect(products.isSuperset(of: [Sample.magazine, Sample.subscription, Sample.levels]))
            #expect(!products.contains(Sample.book), "the refunded book is excluded")
            #expect(restored.entitlements.allSatisfy { $0.transactionID != others.transactionID })
            #expect(restored.enqueued[Sample.levels] != nil)
            let installed = try await client.waitUntilInstalled(productID: Sample.levels)
            #expect(installed.files.count == 10)
            await client.close()

            let history = try #require(try await server.server.ledger.history(containing: magazine.transactionID))
            #expect(history.originalTransactionIDs.count == 4 && history.revision != nil)

            // A later refund of the oldest purchase, which no notification announced, comes after the stored
            // revision: the next restore (through another of the customer's purchases) sees it.
            try await server.refund(magazine.transactionID)
            let after = try await Self.restore(server, levels)
            #expect(!after.contains(Sample.magazine) && after.contains(Sample.levels))
            let resumed = try #require(try await server.server.ledger.history(containing: levels.transactionID))
            #expect(resumed.historyID == history.historyID && resumed.revision != history.revision)
            #expect(try await server.server.ledger.transaction(id: magazine.transactionID)?.cancellationDate != nil)
            #expect(try await server.metric(#"kiosk_app_store_api_calls_total{call="history",outcome="ok"}"#) == 2)
        }
    }

    @Test func aRefundMadeWhileTheServerWasDownIsCaughtUpAtTheNextStart() async throws {
        let kept = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-catch-up-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: kept) }
        // The first server does not read the notification history: the refund below stays missed there.
        let (purchase, grant) = try await TestServer.with(configure: { $0.notificationHistoryInterval = .zero }) {
            server in
            let purchase = try await server.buy(Sample.magazine)
            let grant = try await server.grant(Sample.magazine, proof: try Self.signed(purchase))
            #expect(try await Self.range(server, grant).status == 206)
            let missed = try await server.postJSON(
                "/sandbox/notifications",
                SandboxNotificationRequest(transactionID: purchase.transactionID, kind: .refund, deliver: false),
                as: SandboxNotificationResponse.self)
            #expect(missed.result == nil)
            #expect(try await Self.range(server, grant).status == 206, "the refund was not delivered")
            try FileManager.default.copyItem(at: server.dataDirectory, to: kept)
            return (purchase, grant)
        }
        let log = LogRecorder()
        try await TestServer.with(logger: log.logger, configure: { $0.dataDirectory = kept }) { server in
            let caughtUp = try await Self.eventually {
                try await server.metric(#"kiosk_notification_catch_up_total{outcome="caught_up"}"#) >= 1
            }
            #expect(caughtUp)
            let refused = try await Self.range(server, grant)
            #expect(refused.status == 403)
            #expect(try Self.errorCode(refused) == "transaction_revoked")
            let again = try await server.post(
                "/v1/downloads",
                GrantRequest(
                    proof: try Self.signed(purchase), productID: Sample.magazine,
                    installationID: TestServer.installationID))
            #expect(try Self.errorCode(again) == "not_entitled")
            #expect(log.messages.contains("missed notification caught up"))
            #expect(try await server.server.ledger.notificationCursor(environment: "Sandbox") != nil)
        }
    }

    @Test func aRevocationFoundByLookupAtGrantTimeRefusesAndStopsLiveTokensButNotWithinTheRefresh() async throws {
        let clock = TestServer.manualClock()
        try await TestServer.with(configure: {
            $0.clock = clock
            $0.transactionRefresh = .seconds(60)
        }) { server in
            let lookups = #"kiosk_app_store_api_calls_total{call="transaction",outcome="ok"}"#
            let purchase = try await server.buy(Sample.book)
            let first = try await server.grant(Sample.book, proof: try Self.signed(purchase))
            #expect(try await server.metric(lookups) == 1)
            // Refunded at Apple, announced to nobody.
            try await server.refund(purchase.transactionID)
            clock.advance(by: 30)
            // Within --transaction-refresh the ledger's confirmation holds: no lookup, the grant goes through.
            _ = try await server.grant(Sample.book, proof: try Self.signed(purchase))
            #expect(try await server.metric(lookups) == 1)
            clock.advance(by: 31)
            let refused = try await server.post(
                "/v1/downloads",
                GrantRequest(
                    proof: try Self.signed(purchase), productID: Sample.book, installationID: TestServer.installationID)
            )
            #expect(refused.status == 403)
            #expect(try Self.errorCode(refused) == "not_entitled")
            #expect(try await server.metric(lookups) == 2)
            let live = try await Self.range(server, first)
            #expect(live.status == 403)
            #expect(try Self.errorCode(live) == "transaction_revoked")
        }
    }

    @Test func whenAppleCannotBeReachedLocalDataDecides() async throws {
        let gate = try await AppStoreAPIGate.start()
        defer { gate.stop() }
        try await TestServer.with(configure: {
            $0.appStoreSandboxAPIURL = gate.baseURL
            $0.notificationHistoryInterval = .zero
        }) { server in
            // Every attempt fails (no upstream: 503), through the client's retries.
            let purchase = try await server.buy(Sample.book)
            let grant = try await server.grant(Sample.book, proof: try Self.signed(purchase))
            #expect(grant.productID == Sample.book)
            #expect(try await Self.restore(server, purchase) == [Sample.book])
            #expect(try await server.metric(#"kiosk_app_store_api_fallbacks_total{call="transaction"}"#) == 1)
            #expect(try await server.metric(#"kiosk_app_store_api_fallbacks_total{call="history"}"#) == 1)
            #expect(gate.seen.count == 2 * AppStoreAPICallStateMachine.Configuration().maxAttempts)
        }
    }

    @Test func a429IsHonouredUntilItsRetryAfterInMilliseconds() async throws {
        let gate = try await AppStoreAPIGate.start()
        defer { gate.stop() }
        let retryAfter = Mutex<Date?>(nil)
        gate.script([
            .init(
                status: 429,
                headers: { arrival in
                    let due = arrival.addingTimeInterval(1.5)
                    retryAfter.withLock { $0 = due }
                    return [("Retry-After", String(due.millisecondsSince1970))]
                }, errorCode: 4_290_000)
        ])
        try await TestServer.with(configure: {
            $0.appStoreSandboxAPIURL = gate.baseURL
            $0.notificationHistoryInterval = .zero
        }) { server in
            gate.relay(to: server.port)
            let purchase = try await server.buy(Sample.book)
            _ = try await server.grant(Sample.book, proof: try Self.signed(purchase))
            let seen = gate.seen
            #expect(seen.count == 2 && !seen[0].relayed && seen[1].relayed)
            // The retry carries the same bearer JWT: a token is reused until shortly before it expires.
            #expect(seen[0].authorization != nil && seen[0].authorization == seen[1].authorization)
            let due = try #require(retryAfter.withLock { $0 })
            #expect(seen[1].arrival >= due, "the second attempt waited for the Retry-After time")
            #expect(try await server.metric(#"kiosk_app_store_api_calls_total{call="transaction",outcome="ok"}"#) == 1)
        }
    }

    @Test func a401AnswersStoreMisconfiguredAndTheLogSaysWhatToFixWithoutSecrets() async throws {
        let log = LogRecorder()
        let pem = P256.Signing.PrivateKey().pemRepresentation
        try await TestServer.with(
            logger: log.logger,
            configure: {
                // A key the sandbox store's API does not know: it answers 401, as Apple does for a wrong key.
                $0.appStoreKey = pem
                $0.appStoreKeyID = "WRONGKEY00"
                $0.appStoreIssuerID = "57246542-96fe-1a63-e053-0824d011072a"
                $0.notificationHistoryInterval = .zero
            }
        ) { server in
            let purchase = try await server.buy(Sample.book)
            let refused = try await server.post(
                "/v1/downloads",
                GrantRequest(
                    proof: try Self.signed(purchase), productID: Sample.book, installationID: TestServer.installationID)
            )
            #expect(refused.status == 500)
            #expect(try Self.errorCode(refused) == "store_misconfigured")
            let restore = try await server.post(
                "/v1/receipts/verify", ReceiptVerificationRequest(proof: try Self.signed(purchase)))
            #expect(restore.status == 500)
            let text = log.entries.map { "\($0.level) \($0.message) \($0.metadata)" }.joined(separator: "\n")
            #expect(text.contains("App Store Server API call refused") && text.contains("check the key file"))
            // No key, JWT, signed transaction or grant token in the log.
            let keyBody = pem.split(separator: "\n").dropFirst().first.map(String.init) ?? pem
            #expect(!text.contains(keyBody) && !text.contains("PRIVATE KEY"))
            #expect(!text.contains("eyJ"), "no JWT, JWS or token")
            #expect(!text.contains(try #require(purchase.signedTransaction)))
        }
    }
}
