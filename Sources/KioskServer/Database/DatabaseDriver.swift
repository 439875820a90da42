import SQLKit

/// What a database engine provides to ``KioskDatabase``: ``SQLiteDriver`` and ``PostgresDriver``.
protocol DatabaseDriver: Sendable {
    /// Statements outside transactions, each run alone.
    var sql: any SQLDatabase { get }
    /// See ``KioskDatabase/transaction(_:)``.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T
    /// See ``KioskDatabase/withMigrationLock(_:)``.
    func withMigrationLock<T: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> T
    ) async throws -> T
    /// See ``KioskDatabase/runAlone(_:_:)``.
    func runAlone(_ lockKey: Int64, _ body: @escaping @Sendable () async throws -> Void) async throws -> Bool
    /// See ``KioskDatabase/follow(_:every:_:)``.
    func follow(_ channel: String, every interval: Duration, _ wake: @escaping @Sendable () async -> Void) async
    /// Closes every connection, even when called from a cancelled task.
    func close() async throws
}
