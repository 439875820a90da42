import Foundation
import Logging
import SQLKit

/// The server's database, shared by the ledger and the sandbox store: a SQLite file (the embedded default) or a
/// PostgreSQL database that several instances share. ``open(_:logger:)`` brings its schema to the version this
/// release knows (``SchemaMigrations``); the SQL above it is the same on both engines.
///
/// ```swift
/// let database = try await KioskDatabase.open(try DatabaseURL(parsing: "postgres://kiosk:…@db:5432/kiosk"),
///                                             logger: logger)
/// let ledger = SQLLedger(database: database)
/// ```
public struct KioskDatabase: Sendable {
    /// The engines a ``KioskDatabase`` runs on.
    public enum Engine: String, Sendable, Hashable {
        /// One SQLite file, one connection (WAL mode).
        case sqlite
        /// A PostgreSQL server, through a pool of connections.
        case postgres
    }

    /// Where the database is (its description hides the password).
    public let url: DatabaseURL
    private let driver: any DatabaseDriver

    /// The engine the database runs on.
    public var engine: Engine { url.engine }

    /// The SQLKit view of the database for statements outside a transaction: each runs alone (SQLite: between the
    /// transactions on its one connection; PostgreSQL: on a connection of the pool). Never use it inside a
    /// ``transaction(_:)``'s body, which has its own.
    public var sql: any SQLDatabase { driver.sql }

    private init(url: DatabaseURL, driver: any DatabaseDriver) {
        self.url = url
        self.driver = driver
    }

    /// Opens the database at `url` (a SQLite file is created when missing) and applies the schema migrations it
    /// lacks. Several instances may open one PostgreSQL database at once: one applies them, the others wait. On
    /// PostgreSQL a statement or transaction waits at most `connectionWait` for a connection of the pool.
    /// - Throws: ``KioskDatabaseError`` when the database cannot be reached, its schema is newer than this release or
    ///   a migration fails.
    public static func open(
        _ url: DatabaseURL, connectionWait: Duration = defaultConnectionWait, logger: Logger
    ) async throws -> KioskDatabase {
        let database = try await connect(url, connectionWait: connectionWait, logger: logger)
        do {
            try await SchemaMigrations.apply(to: database, logger: logger)
            return database
        } catch let error as KioskDatabaseError {
            try? await database.close()
            throw error
        } catch {
            try? await database.close()
            throw KioskDatabaseError.migrationFailed(
                database: url.description, reason: KioskDatabaseError.reason(error))
        }
    }

    /// How long a statement waits for a PostgreSQL connection unless told otherwise: 5 s.
    public static let defaultConnectionWait = Duration.seconds(5)

    /// Connects to the database at `url` without touching its schema.
    private static func connect(
        _ url: DatabaseURL, connectionWait: Duration, logger: Logger
    ) async throws -> KioskDatabase {
        switch url.location {
        case .sqlite(let path):
            KioskDatabase(url: url, driver: try await SQLiteDriver.open(path: path, url: url, logger: logger))
        case .postgres(let server):
            KioskDatabase(
                url: url,
                driver: try await PostgresDriver.open(server, url: url, connectionWait: connectionWait, logger: logger))
        }
    }

    /// Runs `body` as one database transaction on one connection: its changes are all kept (when it returns) or
    /// none (when it throws), and it sees no concurrent change, as if transactions ran one after the other.
    ///
    /// SQLite runs it under `BEGIN IMMEDIATE`, alone on the connection. PostgreSQL runs it `SERIALIZABLE` and, when
    /// the server reports a serialization failure or a deadlock, rolls it back and runs `body` again (a bounded
    /// number of times): `body` must act only through the database it is given, and leave any other effect to its
    /// caller once the transaction committed.
    public func transaction<T: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> T
    ) async throws -> T {
        try await driver.transaction(body)
    }

    /// Calls `wake` whenever changes another connection signalled on `channel` may be waiting, until the calling task
    /// is cancelled: at once, then at least every `interval`, and on PostgreSQL also at each `NOTIFY` on `channel`
    /// and each time the connection that `LISTEN`s to it is made again (PostgreSQL drops a notification nobody
    /// listens to, so whoever follows a channel reads what changed from a table, from where it last read). Calls
    /// never overlap.
    ///
    /// A transaction signals `channel` with ``signal(_:in:)``.
    public func follow(
        _ channel: DatabaseChannel, every interval: Duration, _ wake: @escaping @Sendable () async -> Void
    ) async {
        await driver.follow(channel.name, every: interval, wake)
    }

    /// Runs `body` unless another instance sharing the database is running a job under the same `lockKey` (then
    /// returns `false` at once, without running it): a periodic job that must run once per service, not once per
    /// instance. PostgreSQL: a session advisory lock tried (`pg_try_advisory_lock`) on a connection held meanwhile.
    /// SQLite: `body` always runs; processes sharing one file may each run it, so such a job must be idempotent (as
    /// every job here is), which is also what makes a job cut by a crash safe to run again.
    public func runAlone(_ lockKey: Int64, _ body: @escaping @Sendable () async throws -> Void) async throws -> Bool {
        try await driver.runAlone(lockKey, body)
    }

    /// Signals `channel` from inside a running transaction: PostgreSQL delivers the `NOTIFY` when it commits, and
    /// never when it rolls back. SQLite has no notifications: its followers poll.
    static func signal(_ channel: DatabaseChannel, in session: any SQLDatabase) async throws {
        guard session.dialect.name == "postgresql" else { return }
        try await session.raw("SELECT pg_notify(\(bind: channel.name), '')").run()
    }

    /// Checks that the database answers a `SELECT 1` within `timeout`.
    /// - Throws: ``KioskDatabaseError/unreachable(database:reason:)`` when it does not.
    public func checkReachable(timeout: Duration = .seconds(5)) async throws {
        let sql = self.sql
        do {
            let answered = try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try await sql.raw("SELECT 1").run()
                    return true
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return false
                }
                defer { group.cancelAll() }
                return try await group.next() ?? false
            }
            guard answered else {
                throw KioskDatabaseError.unreachable(database: url.description, reason: "no answer within \(timeout)")
            }
        } catch let error as KioskDatabaseError {
            throw error
        } catch {
            throw KioskDatabaseError.unreachable(database: url.description, reason: KioskDatabaseError.reason(error))
        }
    }

    /// The schema's version: the highest migration applied (``SchemaMigrations``).
    public func schemaVersion() async throws -> Int {
        try await SchemaMigrations.version(in: sql)
    }

    /// Closes the database: its connection, or every connection of its pool. Closes even when called from a
    /// cancelled task.
    public func close() async throws {
        try await driver.close()
    }

    /// Runs `body` on one connection while no other process migrates the same database (PostgreSQL: a session
    /// advisory lock, ``SchemaMigrations/lockKey``; SQLite: `body` opens its transactions with `BEGIN IMMEDIATE`,
    /// which other processes wait for).
    func withMigrationLock<T: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> T
    ) async throws -> T {
        try await driver.withMigrationLock(body)
    }
}
