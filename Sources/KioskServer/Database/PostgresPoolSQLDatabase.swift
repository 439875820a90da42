import Logging
import PostgresKit
import SQLKit

/// SQLKit over postgres-nio's pool: each statement runs on a connection leased for that statement, and
/// ``withSession(_:)`` leases one connection for the whole closure. A statement waits at most
/// ``connectionWait`` for its connection (SQLKit's `withSession` is not bounded: its result need not
/// be `Sendable`, and Kiosk does not call it). postgres-kit's `PostgresConnection.sql()` does
/// the SQL: the PostgreSQL dialect, binds and row decoding.
struct PostgresPoolSQLDatabase: SQLDatabase {
    let client: PostgresClient
    /// The database's URL, password redacted, for errors.
    let name: String
    /// How long a statement waits for a connection of the pool (`--database-wait`).
    let connectionWait: Duration
    let logger: Logger
    /// An event loop of the pool's group, for SQLKit's future-based calls.
    let eventLoop: any EventLoop

    var dialect: any SQLDialect { PostgresDialect() }

    func execute(
        sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void
    ) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await self.execute(sql: query, onRow) }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        let logger = self.logger
        try await client.withConnection(waitingAtMost: connectionWait, database: name) { connection in
            try await connection.sql(queryLogLevel: nil, logger: logger).execute(sql: query, onRow)
        }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        let logger = self.logger
        return try await client.withConnection { connection in
            try await closure(connection.sql(queryLogLevel: nil, logger: logger))
        }
    }
}
