import NIOConcurrencyHelpers

/// The refunded and revoked transactions, in memory, so that every content request can check its token's
/// transaction without a database query. Loaded from the ledger at start and kept in step with it by whoever records
/// a cancellation.
public final class RevocationList: Sendable {
    private let revoked: NIOLockedValueBox<Set<String>>

    /// Creates a list holding `transactionIDs`.
    public init(_ transactionIDs: some Sequence<String> = []) { revoked = NIOLockedValueBox(Set(transactionIDs)) }

    /// Loads every cancelled transaction of `ledger`.
    public static func load(from ledger: any Ledger) async throws -> RevocationList {
        RevocationList(try await ledger.revokedTransactionIDs())
    }

    /// Adds a refunded or revoked transaction.
    public func insert(_ transactionID: String) { _ = revoked.withLockedValue { $0.insert(transactionID) } }

    /// Whether the transaction was refunded or revoked.
    public func contains(_ transactionID: String) -> Bool { revoked.withLockedValue { $0.contains(transactionID) } }
}
