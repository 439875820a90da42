import Crypto
import Foundation
import KioskCore
import KioskServerTestSupport
import KioskStore
import Testing

@testable import KioskServer

/// The sandbox store's App Store Server API driven by Kiosk's real client (``AppStoreServerAPI``) in process: the
/// JWT check, history pages and revisions, transaction lookups, notification history and consumption answers.
@Suite("Sandbox App Store Server API")
struct SandboxAppStoreAPITests {
    typealias H = SandboxTestHarness

    /// Kiosk's client of `h`'s store API, signing with `key` (the store's own by default), verifying with the
    /// store's chain.
    static func client(_ h: H, key: AppStoreAPIKey? = nil) throws -> AppStoreServerAPI {
        let authority = try #require(h.authority)
        let api = SandboxAppStoreAPI(store: h.store)
        let client = AppStoreAPIClient(
            tokens: AppStoreAPITokens(key: key ?? h.store.apiKey),
            baseURLs: .init(
                production: SandboxAppStoreAPITransport.productionURL, sandbox: SandboxAppStoreAPITransport.sandboxURL),
            transport: SandboxAppStoreAPITransport(api: api, http: HTTPAppStoreAPITransport()),
            retries: .init(maxAttempts: 1), now: h.clock.closure)
        return AppStoreServerAPI(
            client: client,
            verifier: SignedDataVerifier(
                trustedRoots: [authority.root], bundleID: H.bundleID, environments: ["Sandbox"]))
    }

    /// Every page of the history of `transactionID` after `revision`: the transactions and the last revision.
    static func wholeHistory(
        _ api: AppStoreServerAPI, of transactionID: String, after revision: String? = nil
    ) async throws -> (transactions: [JWSTransaction], revision: String?, pages: Int) {
        var (transactions, revision, pages) = ([JWSTransaction](), revision, 0)
        while true {
            let page = try await api.history(of: transactionID, after: revision, environment: .sandbox)
            transactions += page.transactions
            revision = page.revision
            pages += 1
            if !page.hasMore { return (transactions, revision, pages) }
            try #require(pages < 100)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func historyPagesThroughTheCustomersPurchasesAndARevisionSeesALaterRefund(
        engine: KioskDatabase.Engine
    ) async throws {
        try await H.with(engine, signing: true) { h in
            var bought: [String] = []
            for index in 0..<6 {
                bought.append(try await h.buy(H.coins, user: "ann").transactionID)
                h.clock.advance(by: 60)
                if index == 2 { _ = try await h.buy(H.coins, user: "bob") }
            }
            let api = try Self.client(h)
            let first = try await Self.wholeHistory(api, of: bought[4])
            #expect(first.pages == 2)
            #expect(first.transactions.map(\.transactionId) == bought)
            // Nothing changed: the stored revision gives nothing new.
            let unchanged = try await Self.wholeHistory(api, of: bought[0], after: first.revision)
            #expect(unchanged.transactions.isEmpty)
            // A refund of the oldest purchase comes after the revision: histories are in change order.
            _ = try await h.store.refund(SandboxRefundRequest(transactionID: bought[0]))
            let later = try await Self.wholeHistory(api, of: bought[5], after: first.revision)
            #expect(later.transactions.map(\.transactionId) == [bought[0]])
            #expect(later.transactions.first?.revocationDate != nil)
        }
    }

    @Test func lookupsAndHistoriesOfUnknownTransactionsAndOfProductionAreNotFound() async throws {
        try await H.with(.sqlite, signing: true) { h in
            let bought = try await h.buy(H.issue)
            let api = try Self.client(h)
            let found = try await api.transaction(bought.transactionID, environment: .sandbox)
            #expect(found.transactionId == bought.transactionID && found.productId == H.issue)
            for (id, environment) in [
                ("2999999999999999", StoreEnvironment.sandbox), (bought.transactionID, .production),
            ] {
                await #expect(
                    throws: AppStoreAPIFailure.refused(
                        status: 404, errorCode: 4_040_010, message: "Transaction id not found.")
                ) {
                    _ = try await api.transaction(id, environment: environment)
                }
                await #expect(
                    throws: AppStoreAPIFailure.refused(
                        status: 404, errorCode: 4_040_010, message: "Transaction id not found.")
                ) {
                    _ = try await api.history(of: id, after: nil, environment: environment)
                }
            }
            await #expect(
                throws: AppStoreAPIFailure.refused(
                    status: 400, errorCode: 4_000_005, message: "Invalid request revision.")
            ) {
                _ = try await api.history(of: bought.transactionID, after: "not-a-revision", environment: .sandbox)
            }
        }
    }

    @Test func tokensOfAnotherKeyAreRefusedAsAMisconfiguration() async throws {
        try await H.with(.sqlite, signing: true) { h in
            let bought = try await h.buy(H.issue)
            let own = h.store.apiKey
            let others = [
                AppStoreAPIKey(
                    privateKey: P256.Signing.PrivateKey(), keyID: own.keyID, issuerID: own.issuerID,
                    bundleID: own.bundleID),
                AppStoreAPIKey(
                    privateKey: own.privateKey, keyID: "OTHERKEY00", issuerID: own.issuerID, bundleID: own.bundleID),
                AppStoreAPIKey(
                    privateKey: own.privateKey, keyID: own.keyID, issuerID: UUID().uuidString, bundleID: own.bundleID),
                AppStoreAPIKey(
                    privateKey: own.privateKey, keyID: own.keyID, issuerID: own.issuerID, bundleID: "com.other"),
            ]
            for key in others {
                await #expect(throws: AppStoreAPIFailure.misconfigured(status: 401, errorCode: nil)) {
                    _ = try await Self.client(h, key: key).transaction(bought.transactionID, environment: .sandbox)
                }
            }
        }
    }

    @Test func theTokenCheckFollowsApplesRules() throws {
        let key = AppStoreAPIKey(
            privateKey: P256.Signing.PrivateKey(), keyID: "KEY1234567", issuerID: "issuer", bundleID: "com.example")
        let check = SandboxAPITokenCheck(key: key)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let iat = Int64(now.timeIntervalSince1970)
        let good = try AppStoreAPITokens.sign(key: key, issuedAt: iat, expiresAt: iat + 1800)
        #expect(check.accepts(authorization: "Bearer \(good)", now: now))
        #expect(!check.accepts(authorization: good, now: now))
        #expect(!check.accepts(authorization: nil, now: now))
        // Expired, longer than 60 minutes, issued in the future.
        #expect(!check.accepts(authorization: "Bearer \(good)", now: now.addingTimeInterval(1801)))
        let long = try AppStoreAPITokens.sign(key: key, issuedAt: iat, expiresAt: iat + 3601)
        #expect(!check.accepts(authorization: "Bearer \(long)", now: now))
        let future = try AppStoreAPITokens.sign(key: key, issuedAt: iat + 600, expiresAt: iat + 1200)
        #expect(!check.accepts(authorization: "Bearer \(future)", now: now))
        // One changed byte of the claims.
        var parts = good.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(
            Data(
                String(decoding: Base64URL.decode(parts[1])!, as: UTF8.self)
                    .replacingOccurrences(of: "com.example", with: "com.examplf").utf8))
        #expect(!check.accepts(authorization: "Bearer \(parts.joined(separator: "."))", now: now))
    }

    @Test(arguments: TestDatabase.engines)
    func notificationHistoryListsWhatWasSentPageByPage(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine, signing: true) { h in
            var purchases: [String] = []
            for user in ["ann", "ann", "ann", "bob", "bob", "ann"] {
                purchases.append(try await h.buy(H.coins, user: user).transactionID)
            }
            for (index, id) in purchases.enumerated() {
                h.clock.advance(by: 10)
                _ = try await h.store.notification(
                    for: SandboxNotificationRequest(transactionID: id, kind: .refund, deliver: index % 2 == 0))
            }
            let api = try Self.client(h)
            let now = h.clock.now.millisecondsSince1970
            func all(_ request: AppStoreNotificationHistoryRequest) async throws -> [NotificationPayload] {
                var (payloads, token, pages) = ([NotificationPayload](), String?.none, 0)
                repeat {
                    let page = try await api.notificationHistory(request, paginationToken: token, environment: .sandbox)
                    for signed in page.signedPayloads {
                        payloads.append(try await api.verifier.verifyNotification(signed))
                    }
                    token = page.hasMore ? page.paginationToken : nil
                    pages += 1
                } while token != nil && pages < 100
                return payloads
            }
            let everything = try await all(.init(startDate: now - 3_600_000, endDate: now + 1))
            #expect(everything.count == 6 && everything.allSatisfy { $0.notificationType == "REFUND" })
            let failures = try await all(.init(startDate: now - 3_600_000, endDate: now + 1, onlyFailures: true))
            #expect(failures.count == 3)
            let bobs = try await all(.init(startDate: now - 3_600_000, endDate: now + 1, transactionId: purchases[3]))
            #expect(bobs.count == 2)
            let recent = try await all(.init(startDate: now - 25_000, endDate: now + 1))
            #expect(recent.count == 3)
            // Apple refuses a start more than 180 days back, and an end before the start.
            await #expect(
                throws: AppStoreAPIFailure.refused(
                    status: 400, errorCode: 4_000_012,
                    message: "Invalid request. The start date is earlier than the allowed start date.")
            ) {
                _ = try await api.notificationHistory(
                    .init(startDate: now - 181 * 86_400_000, endDate: now), paginationToken: nil, environment: .sandbox)
            }
            await #expect(throws: AppStoreAPIFailure.self) {
                _ = try await api.notificationHistory(
                    .init(startDate: now, endDate: now - 1), paginationToken: nil, environment: .sandbox)
            }
        }
    }

    @Test func consumptionAnswersAreCheckedAsAppleDoesAndRecorded() async throws {
        try await H.with(.sqlite, signing: true) { h in
            let bought = try await h.buy(H.coins)
            let api = try Self.client(h)
            let good = AppStoreConsumptionRequest(
                customerConsented: true, consumptionPercentage: 100_000, deliveryStatus: .delivered,
                refundPreference: .decline, sampleContentProvided: false)
            try await api.sendConsumption(good, for: bought.transactionID, environment: .sandbox)
            var bad = [good, good, good]
            bad[0].customerConsented = false
            bad[1].consumptionPercentage = 100_001
            bad[2].refundPreference = .grantProrated
            bad[2].consumptionPercentage = 0
            for answer in bad {
                await #expect(throws: AppStoreAPIFailure.self) {
                    try await api.sendConsumption(answer, for: bought.transactionID, environment: .sandbox)
                }
            }
            let recorded = try await h.database.sql.select().column("body").from("sandbox_consumption_answers")
                .all(decodingColumn: "body", as: String.self)
            #expect(recorded.count == 1)
            #expect(try JSONDecoder().decode(AppStoreConsumptionRequest.self, from: Data(recorded[0].utf8)) == good)
        }
    }

    @Test func theFirstCatchUpStartsAtMost180DaysBackAndTheNextFromItsCursor() async throws {
        try await H.with(.sqlite, signing: true) { h in
            let api = try Self.client(h)
            let ledger = SQLLedger(database: h.database)
            let metrics = ServerMetrics()
            let catchUp = NotificationCatchUp(
                api: api,
                processor: NotificationProcessor(
                    verifier: api.verifier, ledger: ledger, revocations: RevocationList(), metrics: metrics,
                    now: h.clock.closure),
                ledger: ledger, environments: [.sandbox], firstRunDays: 180,
                outcome: AppStoreAPICallOutcome(metrics: metrics), metrics: metrics, now: h.clock.closure)
            let bought = try await h.buy(H.coins)
            _ = try await h.store.notification(
                for: SandboxNotificationRequest(transactionID: bought.transactionID, kind: .refund, deliver: false))
            h.clock.advance(by: 1)
            // The first run asks for 180 days, which the sandbox (as Apple) would refuse: it starts inside them.
            let first = try await catchUp.catchUp(.sandbox, logger: LogRecorder().logger)
            #expect(first.start >= h.clock.now.addingTimeInterval(-NotificationCatchUp.reach))
            #expect(first.start <= h.clock.now.addingTimeInterval(-179 * 86_400))
            #expect(first.caughtUp == 1 && first.known == 0)
            #expect(try await ledger.transaction(id: bought.transactionID)?.cancellationDate != nil)
            // The next run starts a little before where the first ended, and finds that one known.
            h.clock.advance(by: 60)
            let next = try await catchUp.catchUp(.sandbox, logger: LogRecorder().logger)
            #expect(next.start == first.end.addingTimeInterval(-NotificationCatchUp.overlap))
            #expect(next.caughtUp == 0 && next.known == 1)
        }
    }
}
