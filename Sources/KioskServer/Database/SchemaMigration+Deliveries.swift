import SQLKit

extension SchemaMigration {
    /// Migration 6: what Kiosk knows of the deliveries behind App Store consumption answers:
    /// - `ledger_deliveries`, each installation's report that it installed a product version (`POST /v1/deliveries`),
    ///   once per purchase, product, version and installation;
    /// - `ledger_consumption_answers`, each answer to a `CONSUMPTION_REQUEST` (the body sent, or why it was not).
    static let deliveries = SchemaMigration(
        version: 6, summary: "delivery reports and the consumption answers sent from them"
    ) { session, engine in
        let key =
            switch engine {
            case .sqlite: "INTEGER PRIMARY KEY AUTOINCREMENT"
            case .postgres: "BIGSERIAL PRIMARY KEY"
            }
        try await session.raw(
            """
            CREATE TABLE ledger_deliveries (
                original_transaction_id TEXT NOT NULL,
                product_id TEXT NOT NULL,
                content_version TEXT NOT NULL,
                installation_id TEXT NOT NULL,
                transaction_id TEXT NOT NULL,
                reported_at_ms BIGINT NOT NULL,
                PRIMARY KEY (original_transaction_id, product_id, content_version, installation_id))
            """
        ).run()
        try await session.raw(
            """
            CREATE TABLE ledger_consumption_answers (
                answer_id \(unsafeRaw: key),
                notification_uuid TEXT NOT NULL,
                transaction_id TEXT NOT NULL,
                body TEXT,
                failure TEXT,
                answered_at_ms BIGINT NOT NULL)
            """
        ).run()
        try await session.raw(
            "CREATE INDEX ledger_consumption_answers_transaction ON ledger_consumption_answers (transaction_id)"
        ).run()
    }
}
