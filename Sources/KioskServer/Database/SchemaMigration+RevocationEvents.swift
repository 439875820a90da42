import SQLKit

extension SchemaMigration {
    /// Migration 2: `ledger_revocation_events`, one row each time a transaction's revocation changed (revoked,
    /// widened to its purchase, or lifted), numbered in commit order. Every instance sharing the database replays the
    /// rows after the last it saw (``RevocationFollower``), so a refund processed at one instance stops live tokens
    /// at all of them.
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
                transaction_id TEXT NOT NULL)
            """
        ).run()
    }
}
