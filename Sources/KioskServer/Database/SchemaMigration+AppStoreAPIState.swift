import SQLKit

extension SchemaMigration {
    /// Migration 5: what the ledger keeps of its conversations with the App Store Server API:
    /// - `ledger_transactions.confirmed_at_ms`, when the API last confirmed a transaction's state (a lookup or a
    ///   history), which `--transaction-refresh` is measured from;
    /// - `ledger_histories` and `ledger_history_members`, each customer history read (Apple gives no customer ID: a
    ///   history is known by the original transactions it returned) with the last `revision`, so that the next
    ///   restore asks only for what changed;
    /// - `ledger_notification_cursors`, per environment, up to when the notification history was caught up.
    static let appStoreAPIState = SchemaMigration(
        version: 5, summary: "App Store Server API state: confirmations, history revisions, notification cursors"
    ) { session, _ in
        try await session.raw("ALTER TABLE ledger_transactions ADD COLUMN confirmed_at_ms BIGINT").run()
        try await session.raw(
            """
            CREATE TABLE ledger_histories (
                history_id TEXT PRIMARY KEY,
                environment TEXT NOT NULL,
                revision TEXT,
                updated_at_ms BIGINT NOT NULL)
            """
        ).run()
        try await session.raw(
            """
            CREATE TABLE ledger_history_members (
                original_transaction_id TEXT PRIMARY KEY,
                history_id TEXT NOT NULL)
            """
        ).run()
        try await session.raw("CREATE INDEX ledger_history_members_history ON ledger_history_members (history_id)")
            .run()
        try await session.raw(
            """
            CREATE TABLE ledger_notification_cursors (
                environment TEXT PRIMARY KEY,
                caught_up_to_ms BIGINT NOT NULL,
                updated_at_ms BIGINT NOT NULL)
            """
        ).run()
    }
}
