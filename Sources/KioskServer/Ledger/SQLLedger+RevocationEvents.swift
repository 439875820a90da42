import SQLKit

/// `ledger_revocation_events`: how the instances sharing a database learn of each other's revocations.
extension SQLLedger {
    /// The PostgreSQL advisory lock a transaction holds from recording a revocation event until it commits: the
    /// ASCII bytes of `KIOSKREV` as one 64-bit key. Event numbers come from a sequence, taken when the row is
    /// inserted, not when it commits; holding this lock makes them commit in their order, so that a follower that
    /// read up to event 10 never finds a 9 committed after it. Revocations are rare: the wait costs nothing.
    public static let revocationEventLockKey: Int64 = 0x4B49_4F53_4B52_4556

    /// Records, inside the running transaction `session`, that `transactionID`'s revocation changed, and signals
    /// ``DatabaseChannel/revocations`` (delivered when the transaction commits).
    static func recordRevocationEvent(transactionID: String, in session: any SQLDatabase) async throws {
        if session.dialect.name == "postgresql" {
            try await session.raw("SELECT pg_advisory_xact_lock(\(bind: revocationEventLockKey))").run()
        }
        try await session.raw(
            """
            INSERT INTO ledger_revocation_events (transaction_id, recorded_at_ms)
            VALUES (\(bind: transactionID), \(Self.databaseNowMilliseconds(session)))
            """
        ).run()
        try await KioskDatabase.signal(.revocations, in: session)
    }

    /// The database's clock in milliseconds since 1970, as SQL: one clock for every instance.
    private static func databaseNowMilliseconds(_ session: any SQLDatabase) -> SQLQueryString {
        session.dialect.name == "postgresql"
            ? "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"
            : "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
    }

    public func revocationEventsPrunedThrough() async throws -> Int64 {
        try await sql.raw("SELECT pruned_through FROM ledger_revocation_pruning WHERE singleton = 1")
            .first(decodingColumn: "pruned_through", as: Int64.self) ?? 0
    }

    public func pruneRevocationEvents(olderThan age: Duration) async throws -> Int {
        let milliseconds = age.components.seconds * 1000 + age.components.attoseconds / 1_000_000_000_000_000
        return try await atomically { database in
            let cutoff: SQLQueryString = "\(Self.databaseNowMilliseconds(database)) - \(bind: milliseconds)"
            let doomed = try await database.raw(
                """
                SELECT COUNT(*) AS doomed, COALESCE(MAX(event_id), 0) AS through
                FROM ledger_revocation_events WHERE recorded_at_ms < \(cutoff)
                """
            ).first()
            let count = try doomed?.decode(column: "doomed", as: Int.self) ?? 0
            let through = try doomed?.decode(column: "through", as: Int64.self) ?? 0
            guard count > 0 else { return 0 }
            try await database.raw("DELETE FROM ledger_revocation_events WHERE event_id <= \(bind: through)").run()
            try await database.raw(
                """
                UPDATE ledger_revocation_pruning SET pruned_through = \(bind: through)
                WHERE singleton = 1 AND pruned_through < \(bind: through)
                """
            ).run()
            return count
        }
    }

    public func latestRevocationEvent() async throws -> Int64 {
        try await sql.raw("SELECT COALESCE(MAX(event_id), 0) AS latest FROM ledger_revocation_events")
            .first(decodingColumn: "latest", as: Int64.self) ?? 0
    }

    public func revocationEvents(after event: Int64, limit: Int) async throws -> [RevocationEvent] {
        let rows = try await sql.raw(
            """
            SELECT e.event_id, t.* FROM ledger_revocation_events e
            JOIN ledger_transactions t ON t.transaction_id = e.transaction_id
            WHERE e.event_id > \(bind: event) ORDER BY e.event_id LIMIT \(bind: limit)
            """
        ).all()
        return try rows.map { row in
            let transaction = try row.decode(model: Row.self).transaction
            return RevocationEvent(
                number: try row.decode(column: "event_id", as: Int64.self), transactionID: transaction.transactionID,
                revocation: transaction.revocation)
        }
    }
}
