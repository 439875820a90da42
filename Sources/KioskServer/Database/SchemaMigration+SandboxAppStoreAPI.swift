import SQLKit

extension SchemaMigration {
    /// Migration 4: what the sandbox store needs to serve the App Store Server API (``SandboxAppStoreAPI``):
    /// - `sandbox_purchases.modified_seq`, the order in which purchases last changed (bought, refunded, reversed,
    ///   expired), which transaction history pages follow, so that a revision sees a later refund of an old purchase;
    /// - `sandbox_notifications`, every notification the sandbox store sent and whether it was delivered, which
    ///   notification history lists;
    /// - `sandbox_consumption_answers`, the consumption information it received.
    static let sandboxAppStoreAPI = SchemaMigration(
        version: 4, summary: "the sandbox store's App Store Server API: change order, notifications sent, consumption"
    ) { session, engine in
        let key =
            switch engine {
            case .sqlite: "INTEGER PRIMARY KEY AUTOINCREMENT"
            case .postgres: "BIGSERIAL PRIMARY KEY"
            }
        try await session.raw("ALTER TABLE sandbox_purchases ADD COLUMN modified_seq BIGINT NOT NULL DEFAULT 0").run()
        try await session.raw(
            "CREATE INDEX sandbox_purchases_user_modified ON sandbox_purchases (user_name, modified_seq, transaction_id)"
        ).run()
        try await session.raw(
            """
            CREATE TABLE sandbox_notifications (
                sequence \(unsafeRaw: key),
                notification_uuid TEXT NOT NULL UNIQUE,
                notification_type TEXT NOT NULL,
                original_transaction_id TEXT,
                signed_date_ms BIGINT NOT NULL,
                delivered INTEGER NOT NULL,
                signed_payload TEXT NOT NULL)
            """
        ).run()
        try await session.raw(
            """
            CREATE TABLE sandbox_consumption_answers (
                answer_id \(unsafeRaw: key),
                transaction_id TEXT NOT NULL,
                body TEXT NOT NULL,
                received_at_ms BIGINT NOT NULL)
            """
        ).run()
    }
}
