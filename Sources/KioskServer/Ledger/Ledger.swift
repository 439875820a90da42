import Foundation

/// A store transaction as the ledger keeps it: what the store said about it the last time it was verified.
public struct LedgerTransaction: Codable, Sendable, Hashable {
    /// The store's transaction ID (unique).
    public var transactionID: String
    /// The first transaction of its chain.
    public var originalTransactionID: String
    /// The product bought.
    public var productID: String
    /// `Production` or `Sandbox`.
    public var environment: String
    /// The app the receipt belongs to.
    public var bundleID: String
    /// When it was bought.
    public var purchaseDate: Date
    /// The end of its paid period, for subscriptions.
    public var expiresDate: Date?
    /// When it was refunded or revoked, if it was.
    public var cancellationDate: Date?
    /// How many were bought.
    public var quantity: Int
    /// When the store last confirmed it.
    public var verifiedAt: Date

    /// Creates a ledger row.
    public init(
        transactionID: String, originalTransactionID: String, productID: String, environment: String,
        bundleID: String, purchaseDate: Date, expiresDate: Date?, cancellationDate: Date?, quantity: Int,
        verifiedAt: Date
    ) {
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.environment = environment
        self.bundleID = bundleID
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.cancellationDate = cancellationDate
        self.quantity = quantity
        self.verifiedAt = verifiedAt
    }
}

/// The server's record of every verified transaction. Recording is idempotent by transaction ID: recording a
/// transaction again updates what may change (expiry, cancellation, last verification).
///
/// The embedded default is ``SQLLedger`` on SQLite; the same queries run on PostgreSQL for scale-out.
public protocol Ledger: Sendable {
    /// Inserts or updates these transactions.
    func record(_ transactions: [LedgerTransaction]) async throws
    /// The transaction with this ID, if recorded.
    func transaction(id: String) async throws -> LedgerTransaction?
    /// How many transactions are recorded.
    func count() async throws -> Int
}
