import Logging
import PostgresKit
import SQLKit

/// The PostgreSQL engine: a pool of connections, postgres-nio's `PostgresClient`, whose `run()` is a task this
/// driver owns and cancels in ``close()``.
///
/// Why `PostgresClient` rather than postgres-kit's own pool (AsyncKit's `EventLoopGroupConnectionPool`): it is the
/// pool postgres-nio builds for Swift concurrency — a connection is leased for the length of an `async` closure and
/// returned when it ends, however it ends; its lifecycle is one task (a ServiceLifecycle `Service`); it keeps idle
/// connections alive — while AsyncKit's pool is deprecated and built on futures. postgres-kit still gives SQLKit its
/// PostgreSQL dialect and row decoding, through `PostgresConnection.sql()`.
///
/// Transactions run `SERIALIZABLE` (see ``transaction(_:)``). A follower of a channel (``follow(_:every:_:)``) has a
/// `PostgresConnection` of its own beside the pool, which `LISTEN`s.
struct PostgresDriver: DatabaseDriver {
    /// How many times a transaction runs before a serialization failure is given up on.
    static let maxAttempts = 25

    /// How long a statement or a transaction waits for a connection of the pool before it is refused
    /// (``KioskDatabaseError/noConnection(database:waited:)``, 503 `database_unavailable`): `--database-wait`.
    let connectionWait: Duration

    /// How long making a connection may take when statements wait `connectionWait` for one: as long (10 s at least,
    /// postgres-nio's default), so that a server waiting longer for its pool does not give up sooner on a slow
    /// connect.
    static func connectTimeout(waiting connectionWait: Duration) -> Duration { max(.seconds(10), connectionWait) }

    /// How long a lost `LISTEN` connection waits before it is made again, at first and at most (doubling between).
    static let relistenDelays = (first: Duration.milliseconds(100), most: Duration.seconds(2))

    private let server: DatabaseURL.Postgres
    /// The database's URL, password redacted, for errors.
    private let name: String
    private let client: PostgresClient
    private let running: Task<Void, Never>
    private let logger: Logger
    let sql: any SQLDatabase

    /// Connects once to check that the server is there and takes the credentials (a pool would retry quietly
    /// forever), then starts the pool, whose connections are waited for at most `connectionWait`. `url` names the
    /// database in errors.
    static func open(
        _ server: DatabaseURL.Postgres, url: DatabaseURL, connectionWait: Duration, logger: Logger
    ) async throws -> PostgresDriver {
        let connectTimeout = Self.connectTimeout(waiting: connectionWait)
        do {
            let probe = try await PostgresConnection.connect(
                configuration: try server.connectionConfiguration(connectTimeout: connectTimeout), id: 0,
                logger: logger)
            try await probe.close()
        } catch {
            throw KioskDatabaseError.unreachable(database: url.description, reason: KioskDatabaseError.reason(error))
        }
        let group = PostgresClient.defaultEventLoopGroup
        let client = PostgresClient(
            configuration: server.clientConfiguration(connectTimeout: connectTimeout), eventLoopGroup: group,
            backgroundLogger: logger)
        let running = Task { await client.run() }
        return PostgresDriver(
            connectionWait: connectionWait, server: server, name: url.description, client: client, running: running,
            logger: logger,
            sql: PostgresPoolSQLDatabase(
                client: client, name: url.description, connectionWait: connectionWait, logger: logger,
                eventLoop: group.any()))
    }

    /// Runs `body` in a `SERIALIZABLE` transaction on one pooled connection. When PostgreSQL reports that it could
    /// not serialize it with concurrent ones (SQLSTATE 40001) or a deadlock (40P01), the transaction is rolled back
    /// and `body` runs again after a short random pause, up to ``maxAttempts`` times.
    ///
    /// Why `SERIALIZABLE` rather than `BEGIN` and row locks: what the ledger checks is often the absence or the number
    /// of rows (a notification not yet applied, fewer installations than the cap), which no row lock can hold, and
    /// serializable transactions keep ``Ledger/transaction(_:)``'s promise — as if one ran after the other — for
    /// every body, present and future, across every instance.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let logger = self.logger
        for attempt in 1...Self.maxAttempts {
            do {
                return try await client.withConnection(waitingAtMost: connectionWait, database: name) {
                    connection in
                    let session = connection.sql(queryLogLevel: nil, logger: logger)
                    try await session.raw("BEGIN ISOLATION LEVEL SERIALIZABLE").run()
                    return try await session.commitOrRollBack(body)
                }
            } catch let error as PSQLError where Self.isConflict(error) {
                logger.debug("transaction conflict, retrying", metadata: ["attempt": "\(attempt)"])
                // Up to 2, 4, … 128 ms, at random: the conflicting transactions do not retry in step.
                try await Task.sleep(for: .microseconds(Int.random(in: 0..<(2_000 << min(attempt - 1, 6)))))
            }
        }
        throw KioskDatabaseError.tooManyConflicts(attempts: Self.maxAttempts)
    }

    /// Holds the session advisory lock ``SchemaMigrations/lockKey`` on one pooled connection while `body` runs.
    func withMigrationLock<T: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> T
    ) async throws -> T {
        let logger = self.logger
        return try await client.withConnection { connection in
            let session = connection.sql(queryLogLevel: nil, logger: logger)
            try await session.raw("SELECT pg_advisory_lock(\(bind: SchemaMigrations.lockKey))").run()
            do {
                let result = try await body(session)
                try await session.raw("SELECT pg_advisory_unlock(\(bind: SchemaMigrations.lockKey))").run()
                return result
            } catch {
                try? await session.raw("SELECT pg_advisory_unlock(\(bind: SchemaMigrations.lockKey))").run()
                throw error
            }
        }
    }

    /// Tries the session advisory lock `lockKey` on a pooled connection, held while `body` runs (its statements use
    /// other connections of the pool), and releases it; `false` without running `body` when another session holds it.
    func runAlone(_ lockKey: Int64, _ body: @escaping @Sendable () async throws -> Void) async throws -> Bool {
        let logger = self.logger
        return try await client.withConnection(waitingAtMost: connectionWait, database: name) { connection in
            let session = connection.sql(queryLogLevel: nil, logger: logger)
            let taken =
                try await session.raw("SELECT pg_try_advisory_lock(\(bind: lockKey)) AS taken")
                .first(decodingColumn: "taken", as: Bool.self) ?? false
            guard taken else { return false }
            do {
                try await body()
            } catch {
                try? await session.raw("SELECT pg_advisory_unlock(\(bind: lockKey))").run()
                throw error
            }
            try await session.raw("SELECT pg_advisory_unlock(\(bind: lockKey))").run()
            return true
        }
    }

    /// Wakes `wake` every `interval` and, on a connection of its own named `kiosk-listener` that `LISTEN`s to
    /// `channel`, at each notification and each time that connection is made (again): what was signalled while it
    /// was down is read then. A lost connection is made again after 100 ms, then up to 2 s between attempts.
    func follow(_ channel: String, every interval: Duration, _ wake: @escaping @Sendable () async -> Void) async {
        let serializer = WakeSerializer(wake)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    await serializer.request()
                    try? await Task.sleep(for: interval)
                }
            }
            group.addTask { await self.listen(channel, serializer) }
            await group.waitForAll()
        }
    }

    /// Keeps a connection listening to `channel` until cancelled, waking `serializer` as ``follow(_:every:_:)`` says.
    private func listen(_ channel: String, _ serializer: WakeSerializer) async {
        var delay = Self.relistenDelays.first
        var failures = 0
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: try server.connectionConfiguration(
                        applicationName: "kiosk-listener", connectTimeout: Self.connectTimeout(waiting: connectionWait)),
                    id: 1,
                    logger: logger)
                do {
                    try await connection.listen(on: channel) { notifications in
                        if failures > 0 {
                            logger.notice("listening to the database again", metadata: ["channel": "\(channel)"])
                        }
                        (delay, failures) = (Self.relistenDelays.first, 0)
                        await serializer.request()
                        for try await _ in notifications { await serializer.request() }
                    }
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            } catch {
                if Task.isCancelled { return }
                failures += 1
                // Once per outage, not at every attempt.
                if failures == 1 {
                    logger.warning(
                        "lost the connection listening to the database; making it again",
                        metadata: ["channel": "\(channel)", "reason": "\(KioskDatabaseError.reason(error))"])
                }
            }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, Self.relistenDelays.most)
        }
    }

    /// Stops the pool: its task ends once every connection is closed.
    func close() async throws {
        running.cancel()
        await running.value
    }

    /// Whether `error` is a serialization failure or a deadlock, after which a transaction may simply run again.
    static func isConflict(_ error: PSQLError) -> Bool {
        ["40001", "40P01"].contains(error.serverInfo?[.sqlState] ?? "")
    }
}
