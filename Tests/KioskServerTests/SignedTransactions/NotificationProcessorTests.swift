import Foundation
import KioskCore
import KioskStore
import Logging
import Testing

@testable import KioskServer

@Suite("App Store Server Notifications")
struct NotificationProcessorTests {
    typealias Chain = TestSigningChain
    let day: TimeInterval = 86_400

    /// A processor over a ledger on a fresh database, with a chain its verifier trusts.
    struct Harness {
        let chain: Chain
        let ledger: SQLLedger
        let revocations: RevocationList
        let processor: NotificationProcessor

        func notify(
            _ type: String, subtype: String? = nil, uuid: String = UUID().uuidString, signed: Date,
            transaction: JWSTransaction, renewal: JWSRenewalInfo? = nil
        ) async throws -> NotificationResult {
            let payload = NotificationPayload(
                notificationType: type, subtype: subtype, notificationUUID: uuid, signedDate: signed,
                data: .init(
                    bundleId: Chain.bundleID, environment: "Sandbox",
                    signedTransactionInfo: try chain.sign(transaction),
                    signedRenewalInfo: try renewal.map { try chain.sign($0) }))
            return try await processor.process(signedPayload: try chain.sign(payload), logger: Logger(label: "test"))
        }
    }

    func withHarness(_ engine: KioskDatabase.Engine, _ body: (Harness) async throws -> Void) async throws {
        try await LedgerTestFixtures.withLedger(engine) { ledger, _ in
            let chain = try Chain()
            let revocations = RevocationList()
            let processor = NotificationProcessor(
                verifier: chain.verifier(), ledger: ledger, revocations: revocations, metrics: ServerMetrics(),
                now: { Chain.now })
            try await body(Harness(chain: chain, ledger: ledger, revocations: revocations, processor: processor))
        }
    }

    @Test("REFUND cancels the transaction in the ledger and revokes it", arguments: TestDatabase.engines)
    func refund(engine: KioskDatabase.Engine) async throws {
        try await withHarness(engine) { (h) async throws in
            let bought = Chain.transaction(id: "t1")
            let refunded = Chain.transaction(id: "t1", revoked: Chain.now)
            let result = try await h.notify("REFUND", signed: Chain.now, transaction: refunded)
            #expect(result.outcome == .applied)
            #expect(result.transactionID == "t1")
            #expect(try await h.ledger.transaction(id: "t1")?.cancellationDate != nil)
            #expect(h.revocations.contains("t1"))
            #expect(try await h.ledger.revocations().map(\.transactionID) == ["t1"])
            // Recording the purchase again (an old signed transaction) does not undo the refund.
            _ = try await LedgerRecording.record(
                [bought.storeTransaction], environment: "Sandbox", bundleID: Chain.bundleID, verifiedAt: Chain.now,
                in: h.ledger)
            #expect(try await h.ledger.transaction(id: "t1")?.cancellationDate != nil)
        }
    }

    @Test("REVOKE without a revocation date still revokes, at the notification's date", arguments: TestDatabase.engines)
    func revoke(engine: KioskDatabase.Engine) async throws {
        try await withHarness(engine) { (h) async throws in
            _ = try await h.notify("REVOKE", signed: Chain.now, transaction: Chain.transaction(id: "t2"))
            #expect(try await h.ledger.transaction(id: "t2")?.cancellationDate == Chain.now)
            #expect(h.revocations.contains("t2"))
        }
    }

    @Test("A notification delivered twice (same notificationUUID) is applied once", arguments: TestDatabase.engines)
    func idempotent(engine: KioskDatabase.Engine) async throws {
        try await withHarness(engine) { (h) async throws in
            let renewal = Chain.transaction(
                id: "r2", original: "r1", purchase: Chain.now, expires: Chain.now + 30 * day)
            let first = try await h.notify("DID_RENEW", uuid: "u-1", signed: Chain.now, transaction: renewal)
            let second = try await h.notify("DID_RENEW", uuid: "u-1", signed: Chain.now, transaction: renewal)
            #expect(first.outcome == .applied)
            #expect(second.outcome == .duplicate)
            #expect(try await h.ledger.count() == 1)
        }
    }

    @Test("A notification delivered to two instances at once is applied once", arguments: TestDatabase.engines)
    func idempotentAcrossInstances(engine: KioskDatabase.Engine) async throws {
        try await LedgerAcrossInstancesTests.withTwoInstances(engine) { first, second in
            let chain = try Chain()
            let processors = [first, second].map { database in
                NotificationProcessor(
                    verifier: chain.verifier(), ledger: SQLLedger(database: database), revocations: RevocationList(),
                    metrics: ServerMetrics(), now: { Chain.now })
            }
            let payload = try chain.sign(
                NotificationPayload(
                    notificationType: "REFUND", subtype: nil, notificationUUID: "once", signedDate: Chain.now,
                    data: .init(
                        bundleId: Chain.bundleID, environment: "Sandbox",
                        signedTransactionInfo: try chain.sign(Chain.transaction(id: "t1", revoked: Chain.now)),
                        signedRenewalInfo: nil)))
            let outcomes = try await withThrowingTaskGroup(of: NotificationResult.Outcome.self) { group in
                for index in 0..<6 {
                    let processor = processors[index % 2]
                    group.addTask {
                        try await processor.process(signedPayload: payload, logger: Logger(label: "test")).outcome
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .applied }.count == 1)
            #expect(outcomes.filter { $0 == .duplicate }.count == 5)
        }
    }

    @Test("DID_RENEW adds the new period; EXPIRED ends it; both move the window", arguments: TestDatabase.engines)
    func renewalAndExpiry(engine: KioskDatabase.Engine) async throws {
        try await withHarness(engine) { (h) async throws in
            let first = Chain.transaction(
                id: "s1", purchase: Chain.now - 30 * day, expires: Chain.now, signed: Chain.now - 30 * day)
            _ = try await h.notify("SUBSCRIBED", signed: Chain.now - 30 * day, transaction: first)
            let renewed = Chain.transaction(
                id: "s2", original: "s1", purchase: Chain.now, expires: Chain.now + 30 * day, signed: Chain.now)
            _ = try await h.notify("DID_RENEW", signed: Chain.now, transaction: renewed)
            let rows = try await h.ledger.transactions(originalTransactionIDs: ["s1"])
            #expect(rows.map(\.transactionID) == ["s1", "s2"])
            #expect(rows.compactMap(\.expiresDate).max() == Chain.now + 30 * day)
            var ended = renewed
            ended.expiresDate = Chain.now + day
            ended.signedDate = Chain.now + day
            _ = try await h.notify("EXPIRED", subtype: "VOLUNTARY", signed: Chain.now + day, transaction: ended)
            #expect(try await h.ledger.transaction(id: "s2")?.expiresDate == Chain.now + day)
        }
    }

    @Test("Out of order: an older notification does not undo a newer one", arguments: TestDatabase.engines)
    func outOfOrder(engine: KioskDatabase.Engine) async throws {
        try await withHarness(engine) { (h) async throws in
            let period = Chain.transaction(
                id: "o1", purchase: Chain.now - day, expires: Chain.now + 29 * day, signed: Chain.now - day)
            var ended = period
            ended.expiresDate = Chain.now
            ended.signedDate = Chain.now
            // The expiry (signed later) arrives first ...
            #expect(try await h.notify("EXPIRED", signed: Chain.now, transaction: ended).outcome == .applied)
            // ... then the subscription notification signed before it.
            #expect(try await h.notify("SUBSCRIBED", signed: Chain.now - day, transaction: period).outcome == .stale)
            #expect(try await h.ledger.transaction(id: "o1")?.expiresDate == Chain.now)
            // A grace period announced before the expiry does not reopen access either.
            let renewal = JWSRenewalInfo(
                originalTransactionId: "o1", productId: period.productId, gracePeriodExpiresDate: Chain.now + 16 * day,
                signedDate: Chain.now - day, environment: "Sandbox")
            let grace = try await h.notify(
                "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", signed: Chain.now - day / 2, transaction: period,
                renewal: renewal)
            #expect(grace.outcome == .stale)
            #expect(try await h.ledger.subscriptionState(originalTransactionID: "o1")?.gracePeriodExpiresDate == nil)
        }
    }

    @Test("A refund applies even when it arrives after a newer notification", arguments: TestDatabase.engines)
    func staleRefundStillApplies(engine: KioskDatabase.Engine) async throws {
        try await withHarness(engine) { (h) async throws in
            let renewal = Chain.transaction(
                id: "x2", original: "x1", purchase: Chain.now, expires: Chain.now + 30 * day)
            _ = try await h.notify("DID_RENEW", signed: Chain.now, transaction: renewal)
            let refunded = Chain.transaction(
                id: "x1", purchase: Chain.now - 30 * day, expires: Chain.now, signed: Chain.now - day,
                revoked: Chain.now - day)
            #expect(try await h.notify("REFUND", signed: Chain.now - day, transaction: refunded).outcome == .applied)
            #expect(h.revocations.contains("x1"))
        }
    }

    @Test(
        "DID_FAIL_TO_RENEW with GRACE_PERIOD opens a grace period; DID_RENEW closes it",
        arguments: TestDatabase.engines)
    func gracePeriod(engine: KioskDatabase.Engine) async throws {
        try await withHarness(engine) { (h) async throws in
            let period = Chain.transaction(
                id: "g1", purchase: Chain.now - 30 * day, expires: Chain.now, signed: Chain.now)
            let renewal = JWSRenewalInfo(
                originalTransactionId: "g1", productId: period.productId, gracePeriodExpiresDate: Chain.now + 16 * day,
                signedDate: Chain.now, environment: "Sandbox")
            _ = try await h.notify(
                "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", signed: Chain.now, transaction: period, renewal: renewal)
            #expect(
                try await h.ledger.subscriptionState(originalTransactionID: "g1")?.gracePeriodExpiresDate == Chain.now
                    + 16 * day)
            let renewed = Chain.transaction(
                id: "g2", original: "g1", purchase: Chain.now + day, expires: Chain.now + 31 * day,
                signed: Chain.now + day)
            _ = try await h.notify("DID_RENEW", signed: Chain.now + day, transaction: renewed)
            #expect(try await h.ledger.subscriptionState(originalTransactionID: "g1")?.gracePeriodExpiresDate == nil)
        }
    }

    @Test("A notification that does not verify is refused as transaction_invalid", arguments: TestDatabase.engines)
    func invalidPayload(engine: KioskDatabase.Engine) async throws {
        try await withHarness(engine) { (h) async throws in
            let stranger = try Chain()
            let payload = NotificationPayload(
                notificationType: "REFUND", notificationUUID: "u", signedDate: Chain.now,
                data: .init(
                    bundleId: Chain.bundleID, environment: "Sandbox", signedTransactionInfo: nil, signedRenewalInfo: nil
                ))
            await #expect(throws: SignedDataRefusal.self) {
                _ = try await h.processor.process(
                    signedPayload: try stranger.sign(payload), logger: Logger(label: "test"))
            }
            do {
                _ = try await h.processor.process(
                    signedPayload: try stranger.sign(payload), logger: Logger(label: "test"))
            } catch let error as SignedDataRefusal {
                #expect(error.errorCode == .transactionInvalid)
                #expect(error.reason == "untrusted_root")
            }
            let otherApp = NotificationPayload(
                notificationType: "REFUND", notificationUUID: "u", signedDate: Chain.now,
                data: .init(
                    bundleId: "com.other.app", environment: "Sandbox", signedTransactionInfo: nil,
                    signedRenewalInfo: nil))
            do {
                _ = try await h.processor.process(
                    signedPayload: try h.chain.sign(otherApp), logger: Logger(label: "test"))
                Issue.record("another app's notification was accepted")
            } catch let error as SignedDataRefusal {
                #expect(error.reason == "bundle_id")
            }
        }
    }

    @Test("A notification without a transaction (TEST) is acknowledged and ignored", arguments: TestDatabase.engines)
    func ignored(engine: KioskDatabase.Engine) async throws {
        try await withHarness(engine) { (h) async throws in
            let payload = NotificationPayload(
                notificationType: "TEST", notificationUUID: "t", signedDate: Chain.now,
                data: .init(
                    bundleId: Chain.bundleID, environment: "Sandbox", signedTransactionInfo: nil, signedRenewalInfo: nil
                ))
            let result = try await h.processor.process(
                signedPayload: try h.chain.sign(payload), logger: Logger(label: "test"))
            #expect(result.outcome == .ignored)
        }
    }

    @Test("Installations asking at once never exceed the limit", arguments: TestDatabase.engines)
    func concurrentInstallations(engine: KioskDatabase.Engine) async throws {
        try await LedgerTestFixtures.withLedger(engine) { ledger, _ in
            let admissions = try await withThrowingTaskGroup(of: InstallationAdmission.self) { group in
                for index in 0..<12 {
                    group.addTask {
                        try await ledger.admitInstallation(
                            "i\(index)", originalTransactionID: "c", limit: 3, at: Chain.now)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let admitted = admissions.filter { if case .admitted = $0 { true } else { false } }
            #expect(admitted.count == 3)
        }
    }

    @Test("Installations are admitted up to the limit, known ones always", arguments: TestDatabase.engines)
    func installations(engine: KioskDatabase.Engine) async throws {
        try await withHarness(engine) { (h) async throws in
            #expect(
                try await h.ledger.admitInstallation("a", originalTransactionID: "p", limit: 2, at: Chain.now)
                    == .admitted(count: 1))
            #expect(
                try await h.ledger.admitInstallation("b", originalTransactionID: "p", limit: 2, at: Chain.now)
                    == .admitted(count: 2))
            #expect(
                try await h.ledger.admitInstallation("c", originalTransactionID: "p", limit: 2, at: Chain.now)
                    == .refused(count: 2))
            #expect(
                try await h.ledger.admitInstallation("a", originalTransactionID: "p", limit: 2, at: Chain.now) == .known
            )
            #expect(
                try await h.ledger.admitInstallation("c", originalTransactionID: "q", limit: 2, at: Chain.now)
                    == .admitted(count: 1))
        }
    }
}
