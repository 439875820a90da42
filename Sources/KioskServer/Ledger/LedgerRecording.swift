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

    /// Records transactions the App Store Server API returned (verified), as confirmed by it at `date`: what it says
    /// is the App Store's state now (a cancellation it shows is recorded; one recorded stays). Returns the
    /// revocations in force for the cancelled ones.
    static func recordConfirmed(
        _ transactions: [JWSTransaction], at date: Date, in ledger: any Ledger
    ) async throws -> [RevocationChange] {
        var changes: [RevocationChange] = []
        let apps = Dictionary(grouping: transactions) {
            AppEnvironment(bundleID: $0.bundleId, environment: $0.environment)
        }
        for (app, group) in apps {
            changes += try await record(
                group.map(\.storeTransaction), environment: app.environment, bundleID: app.bundleID, verifiedAt: date,
                in: ledger)
        }
        try await ledger.markConfirmed(transactionIDs: transactions.map(\.transactionId), at: date)
        return changes
    }

    /// The app and environment a transaction belongs to.
    private struct AppEnvironment: Hashable {
        var bundleID: String
        var environment: String
    }
}
