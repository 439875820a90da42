import SQLKit

/// One numbered step of the database's schema, applied once, in order, inside a transaction (see
/// ``SchemaMigrations``). Its SQL runs on both engines, or asks `engine` where they differ.
struct SchemaMigration: Sendable {
    /// Its number: migrations apply in this order, each once.
    let version: Int
    /// What it does, recorded with it in `kiosk_schema_migrations`.
    let summary: String
    /// Applies it on `session`, inside the transaction that records it.
    let apply: @Sendable (_ session: any SQLDatabase, _ engine: KioskDatabase.Engine) async throws -> Void

    /// The names of `table`'s columns (none when there is no such table).
    static func columns(
        of table: String, in session: any SQLDatabase, engine: KioskDatabase.Engine
    ) async throws -> Set<String> {
        let query: SQLQueryString =
            switch engine {
            case .sqlite: "SELECT name FROM pragma_table_info(\(literal: table))"
            case .postgres:
                """
                SELECT column_name::text AS name FROM information_schema.columns
                WHERE table_schema = current_schema() AND table_name = \(bind: table)
                """
            }
        return Set(try await session.raw(query).all(decodingColumn: "name", as: String.self))
    }
}
