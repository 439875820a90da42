import Foundation
import KioskStore
import SQLKit

/// The ``Ledger`` on a ``KioskDatabase``, SQLite or PostgreSQL: the same SQL on both. Dates are stored as
/// milliseconds since 1970.
///
/// Tables (created by ``SchemaMigrations``): `ledger_transactions`, `ledger_notifications` (applied notification
/// UUIDs), `ledger_subscriptions` (what notifications said about each subscription), `ledger_installations` (which
/// installations use each purchase), `ledger_installation_removals` (when each purchase removed one),
/// `ledger_deliveries` (which installations reported installing what) and `ledger_consumption_answers` (what was
/// answered to consumption requests).
///
/// An operation of one statement runs alone on the database; an operation of several (a batch of records, a check
/// and a change) runs as one ``KioskDatabase/transaction(_:)`` — or inside the caller's, in the ledger a
/// ``transaction(_:)`` hands to its body.
public struct SQLLedger: Ledger {
    /// The database; `nil` for the ledger a running transaction hands to its body.
    private let database: KioskDatabase?
    /// Where statements run: the database's shared view, or the running transaction's session.
    let sql: any SQLDatabase

    /// The ledger over `database`, whose schema ``KioskDatabase/open(_:logger:)`` brought up to date.
    public init(database: KioskDatabase) {
        self.database = database
        self.sql = database.sql
    }

    /// The ledger a running transaction hands to its body: its operations run inside that transaction.
    private init(session: any SQLDatabase) {
        database = nil
        sql = session
    }

    /// Runs `body` as one database transaction, or inside the one this ledger is in.
    func atomically<T: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> T
    ) async throws -> T {
        guard let database else { return try await body(sql) }
        return try await database.transaction(body)
    }

    public func transaction<T: Sendable>(_ body: @escaping @Sendable (any Ledger) async throws -> T) async throws -> T {
        guard let database else { return try await body(self) }
        return try await database.transaction { session in try await body(SQLLedger(session: session)) }
    }

    public func record(_ transactions: [LedgerTransaction]) async throws {
        guard !transactions.isEmpty else { return }
        try await atomically { database in
            for transaction in transactions {
                try await database.insert(into: "ledger_transactions")
                    .model(Row(transaction))
                    .onConflict(with: ["transaction_id"]) { update in
                        update
                            .set(excludedValueOf: "expires_date_ms")
                            // A recorded cancellation stays; a reversed one does not come back.
                            .set(
                                "cancellation_date_ms",
                                to: SQLRaw(
                                    """
                                    COALESCE(ledger_transactions.cancellation_date_ms, CASE WHEN \
                                    ledger_transactions.reinstated_at_ms IS NULL OR \
                                    excluded.cancellation_date_ms > ledger_transactions.reinstated_at_ms \
                                    THEN excluded.cancellation_date_ms END)
                                    """)
                            )
                            .set(excludedValueOf: "quantity")
                            .set(excludedValueOf: "verified_at_ms")
                    }
                    .run()
            }
        }
    }

    public func transaction(id: String) async throws -> LedgerTransaction? {
        try await Self.transaction(id: id, in: sql)
    }

    static func transaction(id: String, in database: any SQLDatabase) async throws -> LedgerTransaction? {
        try await database.select().column("*").from("ledger_transactions")
            .where("transaction_id", .equal, id)
            .first(decoding: Row.self)
            .map(\.transaction)
    }

    public func recordIfAbsent(_ transactions: [LedgerTransaction]) async throws {
        guard !transactions.isEmpty else { return }
        try await atomically { database in
            for transaction in transactions {
                try await database.insert(into: "ledger_transactions").model(Row(transaction))
                    .ignoringConflicts(with: ["transaction_id"])
                    .run()
            }
        }
    }

    public func transactions(originalTransactionIDs: [String]) async throws -> [LedgerTransaction] {
        guard !originalTransactionIDs.isEmpty else { return [] }
        return try await sql.select().column("*").from("ledger_transactions")
            .where("original_transaction_id", .in, originalTransactionIDs)
            .orderBy("purchase_date_ms")
            .all(decoding: Row.self)
            .map(\.transaction)
    }

    public func revoke(transactionID: String, at date: Date, scope: RevocationScope) async throws -> Revocation? {
        try await atomically { database in
            let before = try await Self.transaction(id: transactionID, in: database)
            let milliseconds = date.millisecondsSince1970
            try await database.raw(
                """
                UPDATE ledger_transactions
                SET cancellation_date_ms = COALESCE(cancellation_date_ms, \(bind: milliseconds)),
                    revocation_scope = CASE WHEN \(bind: scope.rawValue) = 'purchase' THEN 'purchase'
                        ELSE COALESCE(revocation_scope, \(bind: scope.rawValue)) END
                WHERE transaction_id = \(bind: transactionID)
                    AND (cancellation_date_ms IS NOT NULL OR reinstated_at_ms IS NULL
                        OR reinstated_at_ms < \(bind: milliseconds))
                """
            ).run()
            let after = try await Self.transaction(id: transactionID, in: database)
            // A cancellation `record(_:)` just wrote has no scope yet: giving it one is the change.
            let unscoped = before?.cancellationDate != nil && before?.revocationScope == nil
            if after?.revocation != before?.revocation || (unscoped && after?.revocation != nil) {
                try await Self.recordRevocationEvent(transactionID: transactionID, in: database)
            }
            return after?.revocation
        }
    }

    public func reinstate(transactionID: String, at date: Date) async throws -> Revocation? {
        try await atomically { database in
            guard let row = try await Self.transaction(id: transactionID, in: database) else { return nil }
            let milliseconds = date.millisecondsSince1970
            let lifted = row.cancellationDate.map { $0.millisecondsSince1970 <= milliseconds } ?? false
            try await database.raw(
                """
                UPDATE ledger_transactions
                SET reinstated_at_ms = CASE WHEN reinstated_at_ms > \(bind: milliseconds) THEN reinstated_at_ms
                        ELSE \(bind: milliseconds) END,
                    cancellation_date_ms = CASE WHEN \(bind: lifted) THEN NULL ELSE cancellation_date_ms END,
                    revocation_scope = CASE WHEN \(bind: lifted) THEN NULL ELSE revocation_scope END
                WHERE transaction_id = \(bind: transactionID)
                """
            ).run()
            if lifted { try await Self.recordRevocationEvent(transactionID: transactionID, in: database) }
            return lifted ? row.revocation : nil
        }
    }

    public func revocations() async throws -> [Revocation] {
        try await sql.select().column("*").from("ledger_transactions")
            .where("cancellation_date_ms", .isNot, SQLLiteral.null)
            .all(decoding: Row.self)
            .compactMap(\.transaction.revocation)
    }

    public func hasNotification(uuid: String) async throws -> Bool {
        try await sql.select().column("notification_uuid").from("ledger_notifications")
            .where("notification_uuid", .equal, uuid)
            .first() != nil
    }

    public func recordNotification(
        uuid: String, type: String, subtype: String?, signedDate: Date, receivedAt: Date
    ) async throws {
        try await sql.insert(into: "ledger_notifications")
            .columns("notification_uuid", "notification_type", "subtype", "signed_date_ms", "received_at_ms")
            .values(
                SQLBind(uuid), SQLBind(type), SQLBind(subtype), SQLBind(signedDate.millisecondsSince1970),
                SQLBind(receivedAt.millisecondsSince1970)
            )
            .ignoringConflicts(with: ["notification_uuid"])
            .run()
    }

    public func subscriptionState(originalTransactionID: String) async throws -> SubscriptionState? {
        try await sql.select().column("*").from("ledger_subscriptions")
            .where("original_transaction_id", .equal, originalTransactionID)
            .first(decoding: SubscriptionRow.self)
            .map {
                SubscriptionState(
                    originalTransactionID: $0.original_transaction_id,
                    lastSignedDate: Date(milliseconds: $0.last_signed_date_ms),
                    gracePeriodExpiresDate: $0.grace_expires_ms.map(Date.init(milliseconds:)))
            }
    }

    public func setSubscriptionState(_ state: SubscriptionState) async throws {
        let row = SubscriptionRow(
            original_transaction_id: state.originalTransactionID,
            last_signed_date_ms: state.lastSignedDate.millisecondsSince1970,
            grace_expires_ms: state.gracePeriodExpiresDate?.millisecondsSince1970)
        try await sql.insert(into: "ledger_subscriptions").model(row)
            .onConflict(with: ["original_transaction_id"]) { update in
                update.set(excludedValueOf: "last_signed_date_ms").set(excludedValueOf: "grace_expires_ms")
            }
            .run()
    }

    public func admitInstallation(
        _ installationID: String, originalTransactionID: String, limit: Int, at date: Date
    ) async throws -> InstallationAdmission {
        // One database transaction counts and inserts, so that two new installations asking at once (in this
        // process or another) cannot both take the last place.
        try await atomically { database in
            try await Self.admitInstallation(
                installationID, originalTransactionID: originalTransactionID, limit: limit, at: date, in: database)
        }
    }

    private static func admitInstallation(
        _ installationID: String, originalTransactionID: String, limit: Int, at date: Date, in database: any SQLDatabase
    ) async throws -> InstallationAdmission {
        func installations() async throws -> [String] {
            try await database.select().column("installation_id").from("ledger_installations")
                .where("original_transaction_id", .equal, originalTransactionID)
                .all(decodingColumn: "installation_id", as: String.self)
        }
        let milliseconds = date.millisecondsSince1970
        if try await installations().contains(installationID) {
            try await database.raw(
                """
                UPDATE ledger_installations
                SET last_seen_ms = CASE WHEN COALESCE(last_seen_ms, first_seen_ms) > \(bind: milliseconds)
                    THEN COALESCE(last_seen_ms, first_seen_ms) ELSE \(bind: milliseconds) END
                WHERE original_transaction_id = \(bind: originalTransactionID)
                    AND installation_id = \(bind: installationID)
                """
            ).run()
            return .known
        }
        try await database.raw(
            """
            INSERT INTO ledger_installations (original_transaction_id, installation_id, first_seen_ms, last_seen_ms)
            SELECT \(bind: originalTransactionID), \(bind: installationID), \(bind: milliseconds), \(bind: milliseconds)
            WHERE (SELECT COUNT(*) FROM ledger_installations
                WHERE original_transaction_id = \(bind: originalTransactionID)) < \(bind: limit)
            ON CONFLICT DO NOTHING
            """
        ).run()
        let now = try await installations()
        return now.contains(installationID) ? .admitted(count: now.count) : .refused(count: now.count)
    }

    public func installations(originalTransactionID: String) async throws -> [InstallationRecord] {
        try await sql.select().column("*").from("ledger_installations")
            .where("original_transaction_id", .equal, originalTransactionID)
            .orderBy("first_seen_ms").orderBy("installation_id")
            .all(decoding: InstallationRow.self)
            .map {
                InstallationRecord(
                    installationID: $0.installation_id, firstSeen: Date(milliseconds: $0.first_seen_ms),
                    lastSeen: Date(milliseconds: $0.last_seen_ms ?? $0.first_seen_ms))
            }
    }

    public func removalAllowance(
        originalTransactionID: String, limit: RemovalLimit, at date: Date
    ) async throws -> RemovalAllowance {
        try await Self.removalAllowance(originalTransactionID: originalTransactionID, limit: limit, at: date, in: sql)
    }

    private static func removalAllowance(
        originalTransactionID: String, limit: RemovalLimit, at date: Date, in database: any SQLDatabase
    ) async throws -> RemovalAllowance {
        let removals = try await database.select().column("removed_at_ms").from("ledger_installation_removals")
            .where("original_transaction_id", .equal, originalTransactionID)
            .where("removed_at_ms", .greaterThan, limit.windowStart(at: date).millisecondsSince1970)
            .all(decodingColumn: "removed_at_ms", as: Int64.self)
        return RemovalAllowance(limit: limit, removalsInWindow: removals.map(Date.init(milliseconds:)))
    }

    public func removeInstallation(
        _ installationID: String, originalTransactionID: String, limit: RemovalLimit, at date: Date
    ) async throws -> InstallationRemoval {
        // One database transaction checks and removes, so that removals asking at once cannot pass the limit.
        try await atomically { database in
            let listed = try await database.select().column("installation_id").from("ledger_installations")
                .where("original_transaction_id", .equal, originalTransactionID)
                .all(decodingColumn: "installation_id", as: String.self)
            guard listed.contains(installationID) else { return .notFound }
            let before = try await Self.removalAllowance(
                originalTransactionID: originalTransactionID, limit: limit, at: date, in: database)
            guard before.left > 0 else { return .refused(before) }
            try await database.delete(from: "ledger_installations")
                .where("original_transaction_id", .equal, originalTransactionID)
                .where("installation_id", .equal, installationID)
                .run()
            try await database.insert(into: "ledger_installation_removals")
                .columns("original_transaction_id", "installation_id", "removed_at_ms")
                .values(SQLBind(originalTransactionID), SQLBind(installationID), SQLBind(date.millisecondsSince1970))
                .run()
            return .removed(
                try await Self.removalAllowance(
                    originalTransactionID: originalTransactionID, limit: limit, at: date, in: database))
        }
    }

    public func count() async throws -> Int {
        try await sql.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n")
            .from("ledger_transactions")
            .first(decodingColumn: "n", as: Int.self) ?? 0
    }

    /// A row of `ledger_installations`.
    private struct InstallationRow: Codable {
        var original_transaction_id: String
        var installation_id: String
        var first_seen_ms: Int64
        var last_seen_ms: Int64?
    }

    /// A row of `ledger_subscriptions`.
    private struct SubscriptionRow: Codable {
        var original_transaction_id: String
        var last_signed_date_ms: Int64
        var grace_expires_ms: Int64?
    }

    /// The table's row, with the column names of the schema.
    struct Row: Codable {
        var transaction_id: String
        var original_transaction_id: String
        var product_id: String
        var environment: String
        var bundle_id: String
        var purchase_date_ms: Int64
        var expires_date_ms: Int64?
        var cancellation_date_ms: Int64?
        var quantity: Int
        var verified_at_ms: Int64
        var revocation_scope: String?
        var reinstated_at_ms: Int64?
        var confirmed_at_ms: Int64?

        init(_ transaction: LedgerTransaction) {
            transaction_id = transaction.transactionID
            original_transaction_id = transaction.originalTransactionID
            product_id = transaction.productID
            environment = transaction.environment
            bundle_id = transaction.bundleID
            purchase_date_ms = transaction.purchaseDate.millisecondsSince1970
            expires_date_ms = transaction.expiresDate?.millisecondsSince1970
            cancellation_date_ms = transaction.cancellationDate?.millisecondsSince1970
            quantity = transaction.quantity
            verified_at_ms = transaction.verifiedAt.millisecondsSince1970
            revocation_scope = transaction.cancellationDate == nil ? nil : transaction.revocationScope?.rawValue
            reinstated_at_ms = nil
            confirmed_at_ms = transaction.confirmedAt?.millisecondsSince1970
        }

        var transaction: LedgerTransaction {
            LedgerTransaction(
                transactionID: transaction_id, originalTransactionID: original_transaction_id, productID: product_id,
                environment: environment, bundleID: bundle_id, purchaseDate: Date(milliseconds: purchase_date_ms),
                expiresDate: expires_date_ms.map(Date.init(milliseconds:)),
                cancellationDate: cancellation_date_ms.map(Date.init(milliseconds:)), quantity: quantity,
                verifiedAt: Date(milliseconds: verified_at_ms),
                revocationScope: cancellation_date_ms == nil ? nil : revocation_scope.flatMap(RevocationScope.init),
                confirmedAt: confirmed_at_ms.map(Date.init(milliseconds:)))
        }
    }
}
