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
    /// What its cancellation closes, when it is cancelled; `nil` otherwise.
    public var revocationScope: RevocationScope?
    /// When the App Store Server API last confirmed its state (a lookup or a history); `nil` when it never did.
    public var confirmedAt: Date?

    /// Creates a ledger row.
    public init(
        transactionID: String, originalTransactionID: String, productID: String, environment: String,
        bundleID: String, purchaseDate: Date, expiresDate: Date?, cancellationDate: Date?, quantity: Int,
        verifiedAt: Date, revocationScope: RevocationScope? = nil, confirmedAt: Date? = nil
    ) {
        self.confirmedAt = confirmedAt
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
        self.revocationScope = revocationScope
    }

    /// The revocation in force for this transaction, if it is cancelled.
    public var revocation: Revocation? {
        guard cancellationDate != nil else { return nil }
        return Revocation(
            transactionID: transactionID, originalTransactionID: originalTransactionID,
            scope: revocationScope ?? RevocationScope.refund(expiresDate: expiresDate))
    }
}

/// What a refund or a revocation closes.
public enum RevocationScope: String, Codable, Sendable, Hashable {
    /// Only what the transaction paid for: its grant tokens, and the issues only its paid period unlocked. A
    /// refunded subscription period; the purchase's other paid periods stay open.
    case transaction
    /// The whole purchase: every transaction of its original transaction, and every token they paid for. A refunded
    /// non-consumable (or consumable), or a Family Sharing `REVOKE`.
    case purchase

    /// The scope of a refund: a transaction with a paid period (a subscription period) is refunded alone; one
    /// without ends the purchase.
    public static func refund(expiresDate: Date?) -> RevocationScope { expiresDate == nil ? .purchase : .transaction }
}

/// A refunded or revoked transaction, and what it closes.
public struct Revocation: Sendable, Hashable {
    /// The cancelled transaction.
    public var transactionID: String
    /// The first transaction of its purchase.
    public var originalTransactionID: String
    /// What the cancellation closes.
    public var scope: RevocationScope

    /// Creates a revocation.
    public init(transactionID: String, originalTransactionID: String, scope: RevocationScope) {
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.scope = scope
    }
}

/// That a transaction's revocation changed, as ``Ledger/revocationEvents(after:limit:)`` reads it back.
public struct RevocationEvent: Sendable, Hashable {
    /// The event's number: events are numbered in the order their changes committed.
    public var number: Int64
    /// The transaction whose revocation changed.
    public var transactionID: String
    /// The revocation in force for it when the event was read, `nil` when none is (a refund reversed).
    public var revocation: Revocation?

    /// Creates an event.
    public init(number: Int64, transactionID: String, revocation: Revocation?) {
        self.number = number
        self.transactionID = transactionID
        self.revocation = revocation
    }
}

/// A change to the revocations in force, applied to the in-memory ``RevocationList`` once the ledger committed it.
public enum RevocationChange: Sendable, Hashable {
    /// A transaction was refunded or revoked.
    case revoked(Revocation)
    /// A refund was reversed (App Store `REFUND_REVERSED`): the transaction entitles again.
    case reinstated(Revocation)
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
/// Refunds and revocations are ordered by date: a reversed refund ("reinstated") ignores any cancellation of the
/// same transaction dated at or before the reversal, so a stale proof or a late notification cannot revoke it again.
///
/// ``SQLLedger`` keeps it in a ``KioskDatabase``: a SQLite file (the embedded default) or PostgreSQL (several
/// instances sharing one ledger), with the same queries.
public protocol Ledger: Sendable {
    /// Runs `body` as one database transaction: the ledger it receives sees no concurrent change, and its changes
    /// are all kept (when `body` returns) or none (when it throws). Transactions run as if one after the other, also
    /// across processes (SQLite: `BEGIN IMMEDIATE` on the ledger's connection, one at a time; PostgreSQL:
    /// `SERIALIZABLE`, run again after a serialization failure). So `body` may run more than once: it acts only
    /// through the ledger it receives, and returns what its caller should do once the transaction committed. Calling
    /// it on the ledger a transaction received runs `body` inside that transaction.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (any Ledger) async throws -> T) async throws -> T
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
    /// Marks a transaction refunded or revoked at `date` (an earlier recorded date is kept; a `purchase` scope
    /// widens a `transaction` one), unless a reversal dated at or after `date` was recorded. Returns the revocation
    /// now in force, `nil` when the transaction is not recorded or the reversal stands.
    func revoke(transactionID: String, at date: Date, scope: RevocationScope) async throws -> Revocation?
    /// Lifts a refund reversed at `date` (App Store `REFUND_REVERSED`), and ignores from now on any cancellation of
    /// the transaction dated at or before `date`. Returns the revocation lifted, `nil` when none was in force (or
    /// the one in force is dated after `date`).
    func reinstate(transactionID: String, at date: Date) async throws -> Revocation?
    /// Every revocation in force. A transaction cancelled by an older release (no recorded scope) is scoped as
    /// ``RevocationScope/refund(expiresDate:)`` says.
    func revocations() async throws -> [Revocation]
    /// The number of the newest revocation event (0 when there is none): a ``RevocationFollower`` that loaded
    /// ``revocations()`` after reading it replays the events after it.
    func latestRevocationEvent() async throws -> Int64
    /// The revocation events numbered after `event`, in order, at most `limit`: each names a transaction whose
    /// revocation changed, with the revocation in force for it now. Every change to the revocations in force
    /// (``revoke(transactionID:at:scope:)`` or ``reinstate(transactionID:at:)`` changing something) records one, in
    /// the order the changes commit.
    func revocationEvents(after event: Int64, limit: Int) async throws -> [RevocationEvent]
    /// The number of the last revocation event pruned (0 when none was): a follower whose last event is older may
    /// have missed some, and loads ``revocations()`` afresh.
    func revocationEventsPrunedThrough() async throws -> Int64
    /// Deletes the revocation events recorded more than `age` ago by the database's clock (every event up to the
    /// newest of them), and records how far it pruned; returns how many it deleted.
    func pruneRevocationEvents(olderThan age: Duration) async throws -> Int
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
    /// already use it. An installation already registered is only marked seen at `date`: it never counts twice.
    func admitInstallation(
        _ installationID: String, originalTransactionID: String, limit: Int, at date: Date
    ) async throws -> InstallationAdmission
    /// Every installation using the purchase `originalTransactionID`, first admitted first.
    func installations(originalTransactionID: String) async throws -> [InstallationRecord]
    /// How many installations the purchase `originalTransactionID` may still remove under `limit` at `date`.
    func removalAllowance(
        originalTransactionID: String, limit: RemovalLimit, at date: Date
    ) async throws -> RemovalAllowance
    /// Marks these transactions confirmed by the App Store Server API at `date`.
    func markConfirmed(transactionIDs: [String], at date: Date) async throws
    /// The customer history that returned the purchase `originalTransactionID`, if one was read.
    func history(containing originalTransactionID: String) async throws -> CustomerHistory?
    /// Keeps `history` (its revision and members); another history holding one of its members is merged into it.
    func saveHistory(_ history: CustomerHistory, at date: Date) async throws
    /// Up to when the notification history of `environment` was caught up; `nil` before the first catch-up.
    func notificationCursor(environment: String) async throws -> Date?
    /// Records that the notification history of `environment` was caught up to `date`.
    func setNotificationCursor(environment: String, to date: Date, at now: Date) async throws
    /// Records that an installation installed a product version; returns whether it is new (a repeat of the same
    /// purchase, product, version and installation changes nothing).
    func recordDelivery(_ delivery: DeliveryRecord) async throws -> Bool
    /// Every delivery reported for the product `productID` of the purchase `originalTransactionID`, first first.
    func deliveries(originalTransactionID: String, productID: String) async throws -> [DeliveryRecord]
    /// Records an answer to a `CONSUMPTION_REQUEST` (sent or not).
    func recordConsumptionAnswer(_ answer: ConsumptionAnswerRecord) async throws
    /// Every answer recorded about the transaction `transactionID`, oldest first.
    func consumptionAnswers(transactionID: String) async throws -> [ConsumptionAnswerRecord]
    /// Removes `installationID` from the purchase `originalTransactionID` and counts the removal at `date`, unless
    /// the purchase has no such installation or no removal left under `limit`.
    func removeInstallation(
        _ installationID: String, originalTransactionID: String, limit: RemovalLimit, at date: Date
    ) async throws -> InstallationRemoval
}

/// A customer's transaction history as the App Store Server API returned it: Apple gives no customer ID, so it is
/// known by the original transactions it returned, with the `revision` after which the next read starts.
public struct CustomerHistory: Sendable, Hashable {
    /// Its ID in the ledger (random).
    public var historyID: String
    /// `Production` or `Sandbox`.
    public var environment: String
    /// Where the next read starts; `nil` when none was returned.
    public var revision: String?
    /// The original transaction IDs of every purchase it returned.
    public var originalTransactionIDs: [String]

    /// Creates a history.
    public init(historyID: String, environment: String, revision: String?, originalTransactionIDs: [String]) {
        self.historyID = historyID
        self.environment = environment
        self.revision = revision
        self.originalTransactionIDs = originalTransactionIDs
    }
}
