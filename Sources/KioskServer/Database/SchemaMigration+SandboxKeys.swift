import SQLKit

extension SchemaMigration {
    /// Migration 3: `sandbox_keys`, the sandbox store's receipt key and signing chain (base64), kept in the database
    /// rather than in each `--data` so that every instance sharing it signs and checks the same receipts and
    /// transactions (``SandboxKeys``).
    static let sandboxKeys = SchemaMigration(version: 3, summary: "sandbox store keys shared by every instance") {
        session, _ in
        try await session.raw("CREATE TABLE sandbox_keys (name TEXT PRIMARY KEY, value TEXT NOT NULL)").run()
    }
}
