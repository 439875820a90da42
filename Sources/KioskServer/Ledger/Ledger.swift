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

/// What the ledger knows of one subscription beyond its transactions, from App Store Server Notifications.
public struct SubscriptionState: Codable, Sendable, Hashable {
    /// The subscription's original transaction.
    public var originalTransactionID: String
    /// The `signedDate` of the newest notification applied: older ones arriving later change nothing that can go
    /// stale.
    public var lastSignedDate: Date
    /// The end of an open billing grace period (the subscriber keeps access until then), if one is open.
    public var gracePeriodExpiresDate: Date?

    /// Creates a state.
    public init(originalTransactionID: String, lastSignedDate: Date, gracePeriodExpiresDate: Date?) {
        self.originalTransactionID = originalTransactionID
        self.lastSignedDate = lastSignedDate
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
    }
}

/// The ledger's answer when an installation asks to use a purchase.
public enum InstallationAdmission: Sendable, Hashable {
    /// The installation was already registered for this purchase.
    case known
    /// The installation is newly registered; `count` installations use the purchase now.
    case admitted(count: Int)
    /// The purchase already serves `count` installations, the most allowed; this one is refused.
    case refused(count: Int)
}

/// The server's record of every verified transaction. Recording is idempotent by transaction ID: recording a
/// transaction again updates what may change (expiry, last verification); a cancellation, once recorded, stays.
///
/// It also keeps what App Store Server Notifications say (which notifications arrived, grace periods) and which
/// installations use each purchase.
///
/// The embedded default is ``SQLLedger`` on SQLite; the same queries run on PostgreSQL for scale-out.
public protocol Ledger: Sendable {
    /// Inserts or updates these transactions (a recorded cancellation is kept).
    func record(_ transactions: [LedgerTransaction]) async throws
    /// Inserts those of these transactions not yet recorded, changing nothing recorded.
    func recordIfAbsent(_ transactions: [LedgerTransaction]) async throws
    /// The transaction with this ID, if recorded.
    func transaction(id: String) async throws -> LedgerTransaction?
    /// Every recorded transaction of these purchases (renewals included), by original transaction ID.
    func transactions(originalTransactionIDs: [String]) async throws -> [LedgerTransaction]
    /// How many transactions are recorded.
    func count() async throws -> Int
    /// Marks a transaction refunded or revoked at `date` (an earlier recorded date is kept).
    func revoke(transactionID: String, at date: Date) async throws
    /// The IDs of every refunded or revoked transaction.
    func revokedTransactionIDs() async throws -> [String]
    /// Whether a notification with this `notificationUUID` was already applied.
    func hasNotification(uuid: String) async throws -> Bool
    /// Records that a notification was applied.
    func recordNotification(
        uuid: String, type: String, subtype: String?, signedDate: Date, receivedAt: Date
    ) async throws
    /// What notifications said about a subscription, if anything.
    func subscriptionState(originalTransactionID: String) async throws -> SubscriptionState?
    /// Replaces what notifications said about a subscription.
    func setSubscriptionState(_ state: SubscriptionState) async throws
    /// Registers `installationID` as a user of the purchase `originalTransactionID`, unless `limit` installations
    /// already use it.
    func admitInstallation(
        _ installationID: String, originalTransactionID: String, limit: Int, at date: Date
    ) async throws -> InstallationAdmission
}
