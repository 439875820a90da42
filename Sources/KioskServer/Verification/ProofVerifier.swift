import Foundation
import KioskCore
import KioskStore
import Logging

/// Turns a proof of purchase (a receipt or a StoreKit 2 signed transaction) into what the ledger knows of its
/// purchases now: the proof's transactions are recorded, then read back with everything the ledger learned from
/// App Store Server Notifications (refunds, renewals, grace periods), so that both proofs go through the same
/// entitlement policy with the same facts. A signed transaction also brings the purchases of its customer's history
/// when one was read (``HistoryRestore``).
struct ProofVerifier: Sendable {
    let receipts: ReceiptVerifier
    let signedData: SignedDataVerifier
    let ledger: any Ledger
    let revocations: RevocationList
    /// Reads app receipts locally (`--receipt-validation api`) instead of sending them to `verifyReceipt`.
    var localReceipts: LocalReceiptVerifier? = nil
    let now: @Sendable () -> Date

    /// Verifies `proof` and returns its purchases as the ledger knows them; throws the refusal
    /// (``ReceiptVerificationError``, ``AppReceiptRefusal`` or ``SignedDataRefusal``) for a refused proof.
    func verify(_ proof: PurchaseProof, logger: Logger) async throws -> VerifiedReceipt {
        let verified: VerifiedReceipt
        var signedDate: Date?
        switch proof {
        case .receipt(let receiptData):
            if let localReceipts {
                verified = try await localReceipts.verify(receiptData: receiptData, logger: logger)
                break
            }
            do {
                verified = try await receipts.verify(receiptData: receiptData)
            } catch {
                logger.notice("receipt refused", metadata: ["code": "\(error.errorCode.rawValue)"])
                throw error
            }
        case .signedTransaction(let jws):
            let transaction: JWSTransaction
            do {
                transaction = try await signedData.verifyTransaction(jws)
            } catch {
                logger.notice("signed transaction refused", metadata: ["reason": "\(error.reason)"])
                throw error
            }
            verified = VerifiedReceipt(
                environment: StoreEnvironment(appleName: transaction.environment) ?? .sandbox,
                bundleID: transaction.bundleId, transactions: [transaction.storeTransaction], status: 0)
            signedDate = transaction.signedDate
        }
        let verifiedAt = now()
        let changes = try await ledger.transaction { [signedDate] ledger in
            // Signed before the newest notification about this purchase: it must not undo what that one said.
            var stale = false
            if let signedDate, let original = verified.transactions.first?.originalTransactionID,
                let state = try await ledger.subscriptionState(originalTransactionID: original)
            {
                stale = signedDate < state.lastSignedDate
            }
            return try await LedgerRecording.record(
                verified.transactions, environment: verified.environment.rawValue, bundleID: verified.bundleID,
                verifiedAt: verifiedAt, in: ledger, onlyIfAbsent: stale)
        }
        revocations.apply(changes)
        // A signed transaction proves its customer's account: the purchases a history read through it (at a restore)
        // belong to the same account, and count as well.
        var history: [String] = []
        if signedDate != nil, let original = verified.transactions.first?.originalTransactionID {
            history = try await ledger.history(containing: original)?.originalTransactionIDs ?? []
        }
        return try await standing(verified, adding: history)
    }

    /// `proof`'s purchases (by original transaction), and those of `more` (a history read for it), as the ledger
    /// records them, with open grace periods applied. Every transaction of a purchase revoked as a whole counts as
    /// cancelled.
    func standing(_ proof: VerifiedReceipt, adding more: [String] = []) async throws -> VerifiedReceipt {
        let originals = Array(Set(proof.transactions.map(\.originalTransactionID)).union(more)).sorted()
        let rows = try await ledger.transactions(originalTransactionIDs: originals)
            .filter { $0.bundleID == proof.bundleID }
        let ended = Dictionary(
            rows.compactMap { row in
                row.revocation?.scope == .purchase ? row.cancellationDate.map { (row.originalTransactionID, $0) } : nil
            },
            uniquingKeysWith: min)
        var transactions = rows.map { row in
            var transaction = StoreTransaction(ledger: row)
            if transaction.cancellationDate == nil { transaction.cancellationDate = ended[row.originalTransactionID] }
            return transaction
        }
        for original in originals {
            guard
                let grace = try await ledger.subscriptionState(originalTransactionID: original)?.gracePeriodExpiresDate,
                let latest = transactions.indices
                    .filter({
                        transactions[$0].originalTransactionID == original && transactions[$0].cancellationDate == nil
                    })
                    .max(by: {
                        (transactions[$0].expiresDate ?? .distantPast) < (transactions[$1].expiresDate ?? .distantPast)
                    }),
                let expires = transactions[latest].expiresDate, expires < grace
            else { continue }
            transactions[latest].expiresDate = grace
        }
        return VerifiedReceipt(
            environment: proof.environment, bundleID: proof.bundleID,
            transactions: transactions.sorted(by: StoreTransaction.purchaseOrder), status: proof.status)
    }
}
