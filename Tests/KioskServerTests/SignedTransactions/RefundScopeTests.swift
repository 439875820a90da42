import Foundation
import Testing

@testable import KioskServer

extension NotificationProcessorTests {
    @Test(
        "A refunded subscription period closes its own tokens only; the purchase's other periods stay open",
        arguments: TestDatabase.engines)
    func periodRefundScope(engine: KioskDatabase.Engine) async throws {
        try await withHarness(engine) { (h) async throws in
            let first = Chain.transaction(id: "p1", purchase: Chain.now - 60 * day, expires: Chain.now - 30 * day)
            let renewal = Chain.transaction(
                id: "p2", original: "p1", purchase: Chain.now - 30 * day, expires: Chain.now)
            _ = try await h.notify("DID_RENEW", signed: Chain.now - day, transaction: renewal)
            var refunded = first
            refunded.revocationDate = Chain.now - day
            _ = try await h.notify("REFUND", signed: Chain.now - day, transaction: refunded)
            #expect(
                try await h.ledger.revocations() == [
                    Revocation(transactionID: "p1", originalTransactionID: "p1", scope: .transaction)
                ])
            #expect(h.revocations.refuses(transactionID: "p1", originalTransactionID: "p1"))
            #expect(!h.revocations.refuses(transactionID: "p2", originalTransactionID: "p1"))
        }
    }

    @Test("A refunded non-consumable and a REVOKE close the whole purchase", arguments: TestDatabase.engines)
    func purchaseScope(engine: KioskDatabase.Engine) async throws {
        try await withHarness(engine) { (h) async throws in
            _ = try await h.notify(
                "REFUND", signed: Chain.now, transaction: Chain.transaction(id: "n1", revoked: Chain.now))
            #expect(h.revocations.refuses(transactionID: "n1-restored", originalTransactionID: "n1"))
            let renewal = Chain.transaction(
                id: "s2", original: "s1", purchase: Chain.now - day, expires: Chain.now + day)
            _ = try await h.notify("REVOKE", signed: Chain.now, transaction: renewal)
            #expect(h.revocations.refuses(transactionID: "s1", originalTransactionID: "s1"))
            #expect(try await h.ledger.transaction(id: "s2")?.revocationScope == .purchase)
        }
    }

    @Test(
        "REFUND_REVERSED lifts the refund; a cancellation dated before the reversal does not come back",
        arguments: TestDatabase.engines)
    func refundReversed(engine: KioskDatabase.Engine) async throws {
        try await withHarness(engine) { (h) async throws in
            let bought = Chain.transaction(id: "r1", purchase: Chain.now - 30 * day, expires: Chain.now + day)
            var refunded = bought
            refunded.revocationDate = Chain.now - 2 * day
            refunded.signedDate = Chain.now - 2 * day
            _ = try await h.notify("REFUND", signed: Chain.now - 2 * day, transaction: refunded)
            #expect(h.revocations.contains("r1"))
            var reversed = bought
            reversed.signedDate = Chain.now - day
            let reversal = try await h.notify("REFUND_REVERSED", signed: Chain.now - day, transaction: reversed)
            #expect(reversal.outcome == .applied)
            #expect(!h.revocations.contains("r1"))
            #expect(try await h.ledger.transaction(id: "r1")?.cancellationDate == nil)
            // The refund delivered again (a new notification UUID), or a proof verified before the reversal: ignored.
            _ = try await h.notify("REFUND", signed: Chain.now - 2 * day, transaction: refunded)
            _ = try await LedgerRecording.record(
                [refunded.storeTransaction], environment: "Sandbox", bundleID: Chain.bundleID, verifiedAt: Chain.now,
                in: h.ledger)
            #expect(try await h.ledger.transaction(id: "r1")?.cancellationDate == nil)
            #expect(!h.revocations.contains("r1"))
            // A new refund, after the reversal, applies.
            var again = bought
            again.revocationDate = Chain.now
            _ = try await h.notify("REFUND", signed: Chain.now, transaction: again)
            #expect(h.revocations.contains("r1"))
        }
    }

    @Test("A reversal that arrives before its refund keeps the transaction open", arguments: TestDatabase.engines)
    func reversalBeforeRefund(engine: KioskDatabase.Engine) async throws {
        try await withHarness(engine) { (h) async throws in
            let bought = Chain.transaction(id: "q1", signed: Chain.now)
            _ = try await h.notify("REFUND_REVERSED", signed: Chain.now, transaction: bought)
            let refunded = Chain.transaction(id: "q1", signed: Chain.now - day, revoked: Chain.now - day)
            _ = try await h.notify("REFUND", signed: Chain.now - day, transaction: refunded)
            #expect(try await h.ledger.transaction(id: "q1")?.cancellationDate == nil)
            #expect(!h.revocations.refuses(transactionID: "q1", originalTransactionID: "q1"))
        }
    }
}
