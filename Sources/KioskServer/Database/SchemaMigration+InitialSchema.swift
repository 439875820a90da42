import SQLKit

extension SchemaMigration {
    /// Migration 1: the schema of the releases before migrations, the ledger's and the sandbox store's tables, with
    /// the columns those releases added along the way. Written so that it is right on an empty database and on a
    /// file of any earlier release (whose tables it adopts with their rows): tables and indexes only when missing,
    /// then the columns older files lack.
    static let initialSchema = SchemaMigration(version: 1, summary: "ledger and sandbox store tables") {
        session, engine in
        for statement in SchemaMigration.initialStatements { try await session.raw(SQLQueryString(statement)).run() }
        // Added to ledger_transactions after the first release: what a cancellation closes, and when a refund was
        // last reversed.
        let transactionColumns = try await SchemaMigration.columns(
            of: "ledger_transactions", in: session, engine: engine)
        for (column, type) in [("revocation_scope", "TEXT"), ("reinstated_at_ms", "BIGINT")]
        where !transactionColumns.contains(column) {
            try await session.raw("ALTER TABLE ledger_transactions ADD COLUMN \(unsafeRaw: column) \(unsafeRaw: type)")
                .run()
        }
        // Added after the first release: when an installation was last admitted (until then: when first admitted).
        let installationColumns = try await SchemaMigration.columns(
            of: "ledger_installations", in: session, engine: engine)
        if !installationColumns.contains("last_seen_ms") {
            try await session.raw("ALTER TABLE ledger_installations ADD COLUMN last_seen_ms BIGINT").run()
            try await session.raw("UPDATE ledger_installations SET last_seen_ms = first_seen_ms").run()
        }
    }

    /// The tables and indexes of migration 1, each created when missing.
    private static let initialStatements = [
        """
        CREATE TABLE IF NOT EXISTS ledger_transactions (
            transaction_id TEXT PRIMARY KEY,
            original_transaction_id TEXT NOT NULL,
            product_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            bundle_id TEXT NOT NULL,
            purchase_date_ms BIGINT NOT NULL,
            expires_date_ms BIGINT,
            cancellation_date_ms BIGINT,
            quantity INTEGER NOT NULL,
            verified_at_ms BIGINT NOT NULL,
            revocation_scope TEXT,
            reinstated_at_ms BIGINT)
        """,
        "CREATE INDEX IF NOT EXISTS ledger_transactions_original ON ledger_transactions (original_transaction_id)",
        """
        CREATE TABLE IF NOT EXISTS ledger_notifications (
            notification_uuid TEXT PRIMARY KEY,
            notification_type TEXT NOT NULL,
            subtype TEXT,
            signed_date_ms BIGINT NOT NULL,
            received_at_ms BIGINT NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS ledger_subscriptions (
            original_transaction_id TEXT PRIMARY KEY,
            last_signed_date_ms BIGINT NOT NULL,
            grace_expires_ms BIGINT)
        """,
        """
        CREATE TABLE IF NOT EXISTS ledger_installations (
            original_transaction_id TEXT NOT NULL,
            installation_id TEXT NOT NULL,
            first_seen_ms BIGINT NOT NULL,
            last_seen_ms BIGINT,
            PRIMARY KEY (original_transaction_id, installation_id))
        """,
        """
        CREATE TABLE IF NOT EXISTS ledger_installation_removals (
            original_transaction_id TEXT NOT NULL,
            installation_id TEXT NOT NULL,
            removed_at_ms BIGINT NOT NULL)
        """,
        """
        CREATE INDEX IF NOT EXISTS ledger_installation_removals_purchase
        ON ledger_installation_removals (original_transaction_id, removed_at_ms)
        """,
        """
        CREATE TABLE IF NOT EXISTS sandbox_purchases (
            transaction_id TEXT PRIMARY KEY,
            original_transaction_id TEXT NOT NULL,
            user_name TEXT NOT NULL,
            product_id TEXT NOT NULL,
            quantity INTEGER NOT NULL,
            purchase_date_ms BIGINT NOT NULL,
            expires_date_ms BIGINT,
            cancellation_date_ms BIGINT)
        """,
        "CREATE INDEX IF NOT EXISTS sandbox_purchases_user ON sandbox_purchases (user_name)",
    ]
}
