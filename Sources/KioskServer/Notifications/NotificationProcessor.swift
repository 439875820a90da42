import Foundation
import KioskCore
import Logging

/// Applies App Store Server Notifications V2 to the ledger.
///
/// - `REFUND` and `REVOKE` cancel the transaction: no further grants, and live grant tokens for it stop opening
///   content (through the ``RevocationList``).
/// - `SUBSCRIBED`, `DID_RENEW`, `EXPIRED`, `GRACE_PERIOD_EXPIRED`, `DID_FAIL_TO_RENEW` (and the other types that
///   carry a transaction) record the transaction, which moves the subscription's paid window; `DID_FAIL_TO_RENEW`
///   with the subtype `GRACE_PERIOD` opens a billing grace period until the renewal information's
///   `gracePeriodExpiresDate`, and the next renewal or expiry closes it.
/// - Idempotent by `notificationUUID`. Out-of-order delivery: a notification signed before the newest one already
///   applied to the same subscription only adds what cannot go stale (a refund, a transaction not yet recorded).
public struct NotificationProcessor: Sendable {
    let verifier: SignedDataVerifier
    let ledger: any Ledger
    let revocations: RevocationList
    let metrics: ServerMetrics
    let now: @Sendable () -> Date

    /// Creates a processor.
    public init(
        verifier: SignedDataVerifier, ledger: any Ledger, revocations: RevocationList, metrics: ServerMetrics,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.verifier = verifier
        self.ledger = ledger
        self.revocations = revocations
        self.metrics = metrics
        self.now = now
    }

    /// Verifies and applies one notification's `signedPayload`. Throws ``APIError`` (`transaction_invalid`) when
    /// the payload or the transaction in it does not verify.
    public func process(signedPayload: String, logger: Logger) async throws -> NotificationResult {
        let notification: NotificationPayload
        do {
            notification = try await verifier.verifyNotification(signedPayload)
        } catch {
            logger.notice("notification refused", metadata: ["reason": "\(error.reason)"])
            throw APIError(error)
        }
        let result = try await apply(notification)
        metrics.recordNotification(type: notification.notificationType, outcome: result.outcome.rawValue)
        logger.info(
            "notification processed",
            metadata: [
                "type": "\(notification.notificationType)", "subtype": "\(notification.subtype ?? "")",
                "outcome": "\(result.outcome.rawValue)",
            ])
        return result
    }

    private func apply(_ notification: NotificationPayload) async throws -> NotificationResult {
        func result(_ outcome: NotificationResult.Outcome, _ transactionID: String?) -> NotificationResult {
            NotificationResult(
                notificationUUID: notification.notificationUUID, notificationType: notification.notificationType,
                subtype: notification.subtype, outcome: outcome, transactionID: transactionID)
        }
        if try await ledger.hasNotification(uuid: notification.notificationUUID) { return result(.duplicate, nil) }
        let outcome: NotificationResult.Outcome
        var transactionID: String?
        if let signedTransaction = notification.data?.signedTransactionInfo {
            let transaction: JWSTransaction
            do {
                transaction = try await verifier.verifyTransaction(signedTransaction)
            } catch {
                throw APIError(error)
            }
            transactionID = transaction.transactionId
            var renewal: JWSRenewalInfo?
            if let signedRenewal = notification.data?.signedRenewalInfo {
                do {
                    renewal = try await verifier.verifyRenewalInfo(signedRenewal)
                } catch {
                    throw APIError(error)
                }
            }
            outcome = try await apply(notification, transaction: transaction, renewal: renewal)
        } else {
            outcome = .ignored
        }
        try await ledger.recordNotification(
            uuid: notification.notificationUUID, type: notification.notificationType, subtype: notification.subtype,
            signedDate: notification.signedDate, receivedAt: now())
        return result(outcome, transactionID)
    }

    private func apply(
        _ notification: NotificationPayload, transaction: JWSTransaction, renewal: JWSRenewalInfo?
    ) async throws -> NotificationResult.Outcome {
        var store = transaction.storeTransaction
        let revokes = ["REFUND", "REVOKE"].contains(notification.notificationType)
        if revokes, store.cancellationDate == nil { store.cancellationDate = notification.signedDate }
        let original = transaction.originalTransactionId
        let state = try await ledger.subscriptionState(originalTransactionID: original)
        let stale = state.map { notification.signedDate < $0.lastSignedDate } ?? false
        // A refund is a fact whatever the order; an older window update must not undo a newer one.
        try await LedgerRecording.record(
            [store], environment: transaction.environment, bundleID: transaction.bundleId, verifiedAt: now(),
            in: ledger, revocations: revocations, onlyIfAbsent: stale && !revokes)
        if stale { return revokes ? .applied : .stale }
        var grace = state?.gracePeriodExpiresDate
        switch (notification.notificationType, notification.subtype) {
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
        return .applied
    }
}
