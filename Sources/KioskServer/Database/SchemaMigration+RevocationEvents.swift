import SQLKit

extension SchemaMigration {
    /// Migration 2: `ledger_revocation_events`, one row each time a transaction's revocation changed (revoked,
    /// widened to its purchase, or lifted), numbered in commit order, with the database's time. Every instance
    /// sharing the database replays the rows after the last it saw (``RevocationFollower``), so a refund processed at
    /// one instance stops live tokens at all of them. Rows older than a day are pruned (``RevocationEventPruning``);
    /// `ledger_revocation_pruning` keeps the last number pruned, so that an instance that fell behind it loads the
    /// revocations afresh instead of replaying.
    static let revocationEvents = SchemaMigration(version: 2, summary: "revocation events for every instance") {
        session, engine in
        let key =
            switch engine {
            case .sqlite: "INTEGER PRIMARY KEY AUTOINCREMENT"
            case .postgres: "BIGSERIAL PRIMARY KEY"
            }
        try await session.raw(
            """
            CREATE TABLE ledger_revocation_events (
                event_id \(unsafeRaw: key),
                transaction_id TEXT NOT NULL,
                recorded_at_ms BIGINT NOT NULL)
            """
        ).run()
        try await session.raw(
            "CREATE TABLE ledger_revocation_pruning (singleton INTEGER PRIMARY KEY, pruned_through BIGINT NOT NULL)"
        ).run()
        try await session.raw("INSERT INTO ledger_revocation_pruning (singleton, pruned_through) VALUES (1, 0)").run()
    }
}
