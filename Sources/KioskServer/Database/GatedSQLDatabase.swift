import Logging
import NIOCore
import SQLKit

/// A SQLKit database whose statements each hold a ``SerialGate`` while they run: the shared view of
/// ``SQLiteDriver``'s one connection, which waits while a transaction holds the gate.
struct GatedSQLDatabase: SQLDatabase {
    /// The connection's own view.
    let base: any SQLDatabase
    /// Held around each statement.
    let gate: SerialGate

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    func execute(
        sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void
    ) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await self.execute(sql: query, onRow) }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await gate.holding { try await base.execute(sql: query, onRow) }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await gate.holding { try await closure(base) }
    }
}
