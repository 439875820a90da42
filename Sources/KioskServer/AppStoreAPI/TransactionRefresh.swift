import Foundation
import KioskStore
import Logging

/// Fresh status on grants: before a grant, the transaction that pays for it is looked up with
/// `GET /inApps/v1/transactions/{transactionId}` unless the ledger confirmed its state with Apple within
/// `--transaction-refresh`. What Apple says is recorded (a revocation found there revokes live tokens, and the
/// caller decides again from the ledger); when Apple cannot be reached, the locally verified data decides.
struct TransactionRefresh: Sendable {
    let api: AppStoreServerAPI
    let ledger: any Ledger
    let revocations: RevocationList
    let outcome: AppStoreAPICallOutcome
    /// How long a confirmation holds; zero looks up at every grant.
    let interval: Duration
    let now: @Sendable () -> Date

    /// Looks `transaction` up unless the ledger confirmed it within ``interval``, and records the answer. Returns
    /// whether the ledger changed its cancellation (the caller decides again).
    /// - Throws: ``AppStoreAPIFailure/misconfigured(status:errorCode:)``; the ledger's errors.
    func refresh(_ transaction: StoreTransaction, environment: StoreEnvironment, logger: Logger) async throws -> Bool {
        let checkedAt = now()
        let before = try await ledger.transaction(id: transaction.transactionID)
        if let confirmed = before?.confirmedAt, checkedAt.timeIntervalSince(confirmed) < interval.timeInterval {
            return false
        }
        let current: JWSTransaction
        do {
            current = try await api.transaction(transaction.transactionID, environment: environment)
            outcome.succeeded("transaction")
        } catch {
            try outcome.failed("transaction", error, logger: logger)
            return false
        }
        let changes = try await ledger.transaction { ledger in
            try await LedgerRecording.recordConfirmed([current], at: checkedAt, in: ledger)
        }
        revocations.apply(changes)
        let after = try await ledger.transaction(id: transaction.transactionID)
        if after?.cancellationDate != before?.cancellationDate {
            logger.notice(
                "transaction lookup found a revocation",
                metadata: ["product": "\(current.productId)", "environment": "\(environment.rawValue)"])
            return true
        }
        return false
    }
}
