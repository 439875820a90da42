import Foundation
import KioskStore
import Testing

@testable import KioskServer

extension NotificationProcessorTests {
    @Test(
        "Two notifications about one subscription, processed at once, always leave the newer state",
        arguments: TestDatabase.engines)
    func concurrentNotificationsKeepTheNewerState(engine: KioskDatabase.Engine) async throws {
        try await withHarness(engine) { (h) async throws in
            for round in 0..<100 {
                let id = "c\(round)"
                // The older notification opens a grace period and says the period ends later; the newer one renews
                // the window to its real end and closes any grace period.
                let older = Chain.transaction(
                    id: id, purchase: Chain.now - 30 * day, expires: Chain.now + 30 * day, signed: Chain.now - day)
                let grace = JWSRenewalInfo(
                    originalTransactionId: id, productId: older.productId, gracePeriodExpiresDate: Chain.now + 16 * day,
                    signedDate: Chain.now - day, environment: "Sandbox")
                let newer = Chain.transaction(
                    id: id, purchase: Chain.now - 30 * day, expires: Chain.now, signed: Chain.now)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    // Alternate which one starts first.
                    let first = round.isMultiple(of: 2)
                    for startsOlder in [first, !first] {
                        group.addTask {
                            if startsOlder {
                                _ = try await h.notify(
                                    "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", signed: Chain.now - day,
                                    transaction: older, renewal: grace)
                            } else {
                                _ = try await h.notify("DID_RENEW", signed: Chain.now, transaction: newer)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let state = try await h.ledger.subscriptionState(originalTransactionID: id)
                #expect(state?.lastSignedDate == Chain.now, "round \(round)")
                #expect(state?.gracePeriodExpiresDate == nil, "round \(round)")
                #expect(try await h.ledger.transaction(id: id)?.expiresDate == Chain.now, "round \(round)")
            }
        }
    }
}
