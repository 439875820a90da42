import Foundation
import KioskStore

/// Recording verified transactions in the ledger; the caller applies the revocations it returns to the in-memory
/// ``RevocationList`` once the ledger transaction they were recorded in commits.
enum LedgerRecording {
    /// Inserts or updates `transactions` (a recorded cancellation stays, a reversed one does not come back) and
    /// returns the revocations in force for the cancelled ones. `scope` overrides what each cancellation closes
    /// (a `REVOKE` ends the purchase); `nil` scopes it as a refund.
    static func record(
        _ transactions: [StoreTransaction], environment: String, bundleID: String, verifiedAt: Date,
        in ledger: any Ledger, onlyIfAbsent: Bool = false, scope: RevocationScope? = nil
    ) async throws -> [RevocationChange] {
        let rows = transactions.map {
            LedgerTransaction(
                transactionID: $0.transactionID, originalTransactionID: $0.originalTransactionID,
                productID: $0.productID, environment: environment, bundleID: bundleID, purchaseDate: $0.purchaseDate,
                expiresDate: $0.expiresDate, cancellationDate: $0.cancellationDate, quantity: $0.quantity,
                verifiedAt: verifiedAt)
        }
        if onlyIfAbsent {
            try await ledger.recordIfAbsent(rows)
        } else {
            try await ledger.record(rows)
        }
        var changes: [RevocationChange] = []
        for row in rows {
            guard let cancelled = row.cancellationDate else { continue }
            let revocation = try await ledger.revoke(
                transactionID: row.transactionID, at: cancelled,
                scope: scope ?? RevocationScope.refund(expiresDate: row.expiresDate))
            if let revocation { changes.append(.revoked(revocation)) }
        }
        return changes
    }
}
