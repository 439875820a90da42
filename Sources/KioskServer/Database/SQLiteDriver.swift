import Logging
import NIOConcurrencyHelpers
import NIOPosix
import SQLKit
import SQLiteKit

/// The SQLite engine: one connection to the file, in WAL mode, with a busy timeout so that other processes on the
/// same file wait for its lock rather than fail. The connection has a thread of its own, so that such a wait holds
/// up nothing else. A ``SerialGate`` lets one caller at a time use the connection: a statement through ``sql`` waits
/// while a transaction runs, so that no transaction takes in another caller's statements.
///
/// Queries are never logged (`queryLogLevel: nil`, on PostgreSQL too): their binds carry keys, receipts and signed
/// transactions, which no log level may show.
struct SQLiteDriver: DatabaseDriver {
    private let connection: SQLiteConnection
    private let thread: NIOThreadPool
    private let gate: SerialGate
    let sql: any SQLDatabase

    /// Opens (creating when missing) the file at `path`; `url` names it in errors.
    static func open(path: String, url: DatabaseURL, logger: Logger) async throws -> SQLiteDriver {
        let thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(
                storage: .file(path: path), threadPool: thread, logger: logger,
                on: MultiThreadedEventLoopGroup.singleton.any())
        } catch {
            try? await thread.shutdownGracefully()
            throw KioskDatabaseError.unreachable(database: url.description, reason: String(describing: error))
        }
        let direct = connection.sql(queryLogLevel: nil)
        do {
            try await direct.raw("PRAGMA busy_timeout=5000").run()
            try await direct.raw("PRAGMA journal_mode=WAL").run()
        } catch {
            try? await Self.close(connection, thread)
            throw error
        }
        let gate = SerialGate()
        return SQLiteDriver(
            connection: connection, thread: thread, gate: gate, sql: GatedSQLDatabase(base: direct, gate: gate))
    }

    /// How many times `BEGIN IMMEDIATE` waits `busy_timeout` for another process's write lock before giving up.
    static let beginAttempts = 6

    func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await gate.holding {
            let session = connection.sql(queryLogLevel: nil)
            try await Self.beginImmediate(on: session)
            return try await session.commitOrRollBack(body)
        }
    }

    /// Takes the file's write lock. Another process may hold it longer than `busy_timeout` (a transaction of its
    /// own, stalled by a busy machine): nothing ran yet, so waiting again is safe, up to ``beginAttempts`` times.
    static func beginImmediate(on session: any SQLDatabase) async throws {
        for attempt in 1...beginAttempts {
            do {
                try await session.raw("BEGIN IMMEDIATE").run()
                return
            } catch let error as SQLiteError where error.reason == .busy && attempt < beginAttempts {
                continue
            }
        }
    }

    func withMigrationLock<T: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> T
    ) async throws -> T {
        try await gate.holding { try await body(connection.sql(queryLogLevel: nil)) }
    }

    /// Runs `body`: see ``KioskDatabase/runAlone(_:_:)``.
    func runAlone(_ lockKey: Int64, _ body: @escaping @Sendable () async throws -> Void) async throws -> Bool {
        try await body()
        return true
    }

    /// SQLite has no notifications: `wake` runs every `interval`, for a change made by another process on the file.
    func follow(_ channel: String, every interval: Duration, _ wake: @escaping @Sendable () async -> Void) async {
        while !Task.isCancelled {
            await wake()
            try? await Task.sleep(for: interval)
        }
    }

    func close() async throws {
        try await Self.close(connection, thread)
    }

    /// Closes the connection, then its thread. In a task of its own, so that a cancelled caller still closes, and with
    /// sqlite-nio's future-returning `close()`, which no cancellation skips. Should the thread refuse the work all the
    /// same (it was stopped), the connection is kept in ``unclosed`` rather than released open: sqlite-nio's
    /// deinitializer traps on an open connection in a debug build, which stopped a test process once (its cause was
    /// not found; the close's error is rethrown, so it is not hidden either).
    private static func close(_ connection: SQLiteConnection, _ thread: NIOThreadPool) async throws {
        try await Task {
            do {
                try await connection.close().get()
            } catch {
                if !connection.isClosed { unclosed.withLockedValue { $0.append(connection) } }
                try? await thread.shutdownGracefully()
                throw error
            }
            try await thread.shutdownGracefully()
        }.value
    }

    /// Connections whose close failed, kept for the life of the process (see ``close(_:_:)``).
    private static let unclosed = NIOLockedValueBox<[SQLiteConnection]>([])
}
