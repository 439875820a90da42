import Foundation
import KioskStore
import Logging

/// Restore from the customer's history: reads `GET /inApps/v2/history` through every page, verifies and records
/// each transaction in the ledger, and keeps the last `revision` so that the next restore of the same customer asks
/// only for what changed since. Apple orders the history by modification date, so a later refund of an old purchase
/// comes back after a stored revision.
///
/// Apple gives no customer ID: a history is known by the original transactions it returned
/// (``CustomerHistory``); a restore through any of them resumes from its revision.
struct HistoryRestore: Sendable {
    /// The most pages one restore reads (Apple's are 20 transactions).
    static let maxPages = 1000

    let api: AppStoreServerAPI
    let ledger: any Ledger
    let revocations: RevocationList
    let outcome: AppStoreAPICallOutcome
    let now: @Sendable () -> Date

    /// The original transaction IDs of every purchase in the history of the customer who made the purchase
    /// `originalTransactionID`, after recording what changed since the last read; nil when the history could not be
    /// read (the caller restores from the proof alone).
    /// - Throws: ``AppStoreAPIFailure/misconfigured(status:errorCode:)``; the ledger's errors.
    func purchases(
        of originalTransactionID: String, environment: StoreEnvironment, logger: Logger
    ) async throws -> [String]? {
        let stored = try await ledger.history(containing: originalTransactionID)
        let resumed = stored.flatMap { $0.environment == environment.rawValue ? $0.revision : nil }
        let read: (transactions: [JWSTransaction], revision: String?)
        do {
            do {
                read = try await readPages(of: originalTransactionID, after: resumed, environment: environment)
            } catch AppStoreAPIFailure.refused(_, 4_000_005?, _) where resumed != nil {
                // A revision Apple no longer takes: read the whole history again.
                read = try await readPages(of: originalTransactionID, after: nil, environment: environment)
            }
            outcome.succeeded("history")
        } catch {
            try outcome.failed("history", error, logger: logger)
            return nil
        }
        let verifiedAt = now()
        let changes = try await ledger.transaction { ledger in
            try await LedgerRecording.recordConfirmed(read.transactions, at: verifiedAt, in: ledger)
        }
        revocations.apply(changes)
        let members = Set(stored?.originalTransactionIDs ?? [])
            .union(read.transactions.map(\.originalTransactionId)).union([originalTransactionID])
        try await ledger.saveHistory(
            CustomerHistory(
                historyID: stored?.historyID ?? UUID().uuidString.lowercased(), environment: environment.rawValue,
                revision: read.revision ?? resumed, originalTransactionIDs: members.sorted()),
            at: verifiedAt)
        logger.info(
            "history read",
            metadata: [
                "environment": "\(environment.rawValue)", "changed": "\(read.transactions.count)",
                "purchases": "\(members.count)", "resumed": "\(resumed != nil)",
            ])
        return members.sorted()
    }

    /// Every page of the history after `revision`: the transactions, and the last page's revision.
    private func readPages(
        of transactionID: String, after revision: String?, environment: StoreEnvironment
    ) async throws -> (transactions: [JWSTransaction], revision: String?) {
        var (transactions, revision) = ([JWSTransaction](), revision)
        for _ in 0..<Self.maxPages {
            let page = try await api.history(of: transactionID, after: revision, environment: environment)
            transactions += page.transactions
            revision = page.revision ?? revision
            if !page.hasMore { return (transactions, revision) }
        }
        throw AppStoreAPIAnswerError(call: "transaction history", problem: "more than \(Self.maxPages) pages")
    }
}
