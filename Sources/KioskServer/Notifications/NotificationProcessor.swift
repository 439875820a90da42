import Foundation
import KioskCore
import KioskStore
import Logging

/// Applies App Store Server Notifications V2 to the ledger.
///
/// - `REFUND` cancels the transaction: no further grants by it, and the grant tokens it paid for stop opening content
///   (through the ``RevocationList``). A refunded subscription period closes only that period (its tokens, and the
///   issues only it unlocked); the other paid periods stay open. A refunded non-consumable or consumable, and a
///   Family Sharing `REVOKE`, end the whole purchase: every transaction and token of its original transaction.
/// - `REFUND_REVERSED` lifts the refund: the transaction entitles again, and its tokens open content again. A
///   cancellation dated at or before the reversal (a late notification, a proof verified before it) is ignored.
/// - `SUBSCRIBED`, `DID_RENEW`, `EXPIRED`, `GRACE_PERIOD_EXPIRED`, `DID_FAIL_TO_RENEW` (and the other types that
///   carry a transaction) record the transaction, which moves the subscription's paid window; `DID_FAIL_TO_RENEW`
///   with the subtype `GRACE_PERIOD` opens a billing grace period until the renewal information's
///   `gracePeriodExpiresDate`, and the next renewal or expiry closes it.
/// - `CONSUMPTION_REQUEST` records its transaction, then is answered from Kiosk's delivery records
///   (``ConsumptionAnswering``), once: a duplicate is not answered again.
/// - Idempotent by `notificationUUID`. Out-of-order delivery: a notification signed before the newest one already
///   applied to the same subscription only adds what cannot go stale (a refund or its reversal, ordered by their
///   dates, and a transaction not yet recorded).
/// - Atomic: "seen?", applying, recording the notification and the subscription state's read-then-write are one
///   ledger transaction, so concurrent notifications about the same subscription apply in `signedDate` order.
public struct NotificationProcessor: Sendable {
    let verifier: SignedDataVerifier
    let ledger: any Ledger
    let revocations: RevocationList
    let metrics: ServerMetrics
    let now: @Sendable () -> Date
    /// Answers consumption requests; nil leaves them unanswered, silently.
    let consumption: ConsumptionAnswering?

    /// Creates a processor that leaves consumption requests unanswered.
    public init(
        verifier: SignedDataVerifier, ledger: any Ledger, revocations: RevocationList, metrics: ServerMetrics,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.init(
            verifier: verifier, ledger: ledger, revocations: revocations, metrics: metrics, consumption: nil, now: now)
    }

    /// Creates a processor that hands consumption requests to `consumption`.
    init(
        verifier: SignedDataVerifier, ledger: any Ledger, revocations: RevocationList, metrics: ServerMetrics,
        consumption: ConsumptionAnswering?, now: @escaping @Sendable () -> Date
    ) {
        self.verifier = verifier
        self.ledger = ledger
        self.revocations = revocations
        self.metrics = metrics
        self.consumption = consumption
        self.now = now
    }

    /// Verifies and applies one notification's `signedPayload`. Throws a ``SignedDataRefusal`` (which answers
    /// `transaction_invalid`) when the payload or the transaction in it does not verify.
    public func process(signedPayload: String, logger: Logger) async throws -> NotificationResult {
        let notification: NotificationPayload
        do {
            notification = try await verifier.verifyNotification(signedPayload)
        } catch {
            logger.notice("notification refused", metadata: ["reason": "\(error.reason)"])
            throw error
        }
        let (result, transaction) = try await apply(notification)
        metrics.recordNotification(type: notification.notificationType, outcome: result.outcome.rawValue)
        logger.info(
            "notification processed",
            metadata: [
                "type": "\(notification.notificationType)", "subtype": "\(notification.subtype ?? "")",
                "outcome": "\(result.outcome.rawValue)",
            ])
        if notification.notificationType == "CONSUMPTION_REQUEST", result.outcome != .duplicate, let transaction,
            let consumption
        {
            try await consumption.answer(notification, about: transaction, logger: logger)
        }
        return result
    }

    /// Applies `notification` to the ledger; returns the result and the verified transaction it carried.
    private func apply(_ notification: NotificationPayload) async throws -> (NotificationResult, JWSTransaction?) {
        var verified: (transaction: JWSTransaction, renewal: JWSRenewalInfo?)?
        if let signedTransaction = notification.data?.signedTransactionInfo {
            let transaction = try await verifier.verifyTransaction(signedTransaction)
            var renewal: JWSRenewalInfo?
            if let signedRenewal = notification.data?.signedRenewalInfo {
                renewal = try await verifier.verifyRenewalInfo(signedRenewal)
            }
            verified = (transaction, renewal)
        }
        let receivedAt = now()
        let (outcome, changes) = try await ledger.transaction { [verified] ledger in
            if try await ledger.hasNotification(uuid: notification.notificationUUID) {
                return (NotificationResult.Outcome.duplicate, [RevocationChange]())
            }
            var applied = (NotificationResult.Outcome.ignored, [RevocationChange]())
            if let verified {
                applied = try await apply(
                    notification, transaction: verified.transaction, renewal: verified.renewal, in: ledger,
                    at: receivedAt)
            }
            try await ledger.recordNotification(
                uuid: notification.notificationUUID, type: notification.notificationType,
                subtype: notification.subtype, signedDate: notification.signedDate, receivedAt: receivedAt)
            return applied
        }
        revocations.apply(changes)
        let result = NotificationResult(
            notificationUUID: notification.notificationUUID, notificationType: notification.notificationType,
            subtype: notification.subtype, outcome: outcome,
            transactionID: outcome == .duplicate ? nil : verified?.transaction.transactionId)
        return (result, verified?.transaction)
    }

    /// Applies a notification about `transaction` inside a ledger transaction; returns the outcome and the
    /// revocation changes to apply in memory once it commits.
    private func apply(
        _ notification: NotificationPayload, transaction: JWSTransaction, renewal: JWSRenewalInfo?,
        in ledger: any Ledger, at verifiedAt: Date
    ) async throws -> (NotificationResult.Outcome, [RevocationChange]) {
        var store = transaction.storeTransaction
        let type = notification.notificationType
        let revokes = ["REFUND", "REVOKE"].contains(type)
        let reverses = type == "REFUND_REVERSED"
        if revokes, store.cancellationDate == nil { store.cancellationDate = notification.signedDate }
        // The reversal's transaction is no longer cancelled, whatever an older copy of it said.
        if reverses { store.cancellationDate = nil }
        let original = transaction.originalTransactionId
        let state = try await ledger.subscriptionState(originalTransactionID: original)
        let stale = state.map { notification.signedDate < $0.lastSignedDate } ?? false
        // A refund and its reversal are facts whatever the order (their dates order them); an older window update
        // must not undo a newer one.
        var changes = try await LedgerRecording.record(
            [store], environment: transaction.environment, bundleID: transaction.bundleId, verifiedAt: verifiedAt,
            in: ledger, onlyIfAbsent: stale && !revokes && !reverses, scope: type == "REVOKE" ? .purchase : nil)
        if reverses,
            let lifted = try await ledger.reinstate(
                transactionID: transaction.transactionId, at: notification.signedDate)
        {
            changes.append(.reinstated(lifted))
        }
        if stale { return (revokes || reverses ? .applied : .stale, changes) }
        var grace = state?.gracePeriodExpiresDate
        switch (type, notification.subtype) {
        case ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"): grace = renewal?.gracePeriodExpiresDate
        case ("DID_RENEW", _), ("SUBSCRIBED", _), ("EXPIRED", _), ("GRACE_PERIOD_EXPIRED", _), ("REFUND", _),
            ("REVOKE", _):
            grace = nil
        default: break
        }
        try await ledger.setSubscriptionState(
            SubscriptionState(
                originalTransactionID: original, lastSignedDate: notification.signedDate,
                gracePeriodExpiresDate: grace))
        return (.applied, changes)
    }
}
