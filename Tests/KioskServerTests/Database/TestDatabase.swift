import Foundation
import KioskServerTestSupport
import Logging
import PostgresNIO
import SQLKit
import SQLiteKit
import Testing

@testable import KioskServer

/// The databases the ledger, store and notification tests run on: SQLite always, PostgreSQL when
/// `KIOSK_TEST_POSTGRES_URL` names a server (`postgres://role:password@127.0.0.1:PORT/postgres`, a role with CREATEDB;
/// `.ci/run` starts one). Without it the tests run on SQLite only, and ``PostgreSQLTestServerTests`` and the tests
/// that need PostgreSQL are reported as skipped.
///
/// Each PostgreSQL case gets a database of its own, `kiosk_t_<random>`, dropped afterwards, so the cases run in
/// parallel.
enum TestDatabase {
    /// The variable naming the PostgreSQL server of the tests.
    static let postgresVariable = PostgresTestServer.variable

    /// Whether `KIOSK_TEST_POSTGRES_URL` is set.
    static let isPostgresConfigured = PostgresTestServer.isConfigured

    /// The arguments of a test that runs on every engine: SQLite, and PostgreSQL when configured.
    static let engines: [KioskDatabase.Engine] = isPostgresConfigured ? [.sqlite, .postgres] : [.sqlite]

    /// How long the tests' databases and servers wait for a PostgreSQL connection: far longer than the server's
    /// default, so that a loaded machine (the whole suite starting at once on two cores) makes a test slower, never a
    /// refusal. The outage tests, which check that the wait is bounded, set their own.
    static let connectionWait = Duration.seconds(120)

    /// The logger of the test databases: silent.
    static let logger = Logger(label: "kiosk.tests.database") { _ in SwiftLogNoOpLogHandler() }

    /// The test server, as `KIOSK_TEST_POSTGRES_URL` names it.
    static func postgresServer() throws -> DatabaseURL.Postgres {
        let text = ProcessInfo.processInfo.environment[postgresVariable] ?? ""
        guard case .postgres(let server) = try DatabaseURL(parsing: text).location else {
            throw DatabaseURL.Invalid(description: "\(postgresVariable) must be a postgres:// URL")
        }
        return server
    }

    /// Runs `body` with a fresh database on `engine`, opened (so migrated), then closes and deletes it. A
    /// `PSQLError`, which describes itself generically, is thrown described in full, so that a failed test says what
    /// PostgreSQL said.
    static func with<T>(
        _ engine: KioskDatabase.Engine, logger: Logger = TestDatabase.logger,
        _ body: (KioskDatabase) async throws -> T
    ) async throws -> T {
        do {
            return try await withURL(engine) { url in try await withOpened(url, logger: logger, body) }
        } catch let error as PSQLError {
            throw PostgresTestServer.Failed(statement: "a test on PostgreSQL", detail: String(reflecting: error))
        }
    }

    /// Opens (so migrates) the database at `url`, runs `body` with it and closes it.
    static func withOpened<T>(
        _ url: DatabaseURL, logger: Logger = TestDatabase.logger,
        _ body: (KioskDatabase) async throws -> T
    ) async throws -> T {
        let database = try await KioskDatabase.open(url, connectionWait: connectionWait, logger: logger)
        do {
            let result = try await body(database)
            try await database.close()
            return result
        } catch {
            try? await database.close()
            throw error
        }
    }

    /// Writes a SQLite file at `url` as a release before migrations would have: `statements`, run on a plain
    /// connection.
    static func prepareOldRelease(at url: DatabaseURL, statements: [String]) async throws {
        guard case .sqlite(let path) = url.location else { throw DatabaseURL.Invalid(description: "not SQLite") }
        let connection = try await SQLiteConnection.open(storage: .file(path: path))
        do {
            for statement in statements { try await connection.sql().raw(SQLQueryString(statement)).run() }
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Runs `body` with the URL of a fresh, empty database on `engine` — a SQLite file in a new folder, or a new
    /// database on the PostgreSQL test server — and deletes it afterwards. `body` closes what it opens.
    static func withURL<T>(_ engine: KioskDatabase.Engine, _ body: (DatabaseURL) async throws -> T) async throws -> T {
        switch engine {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("kiosk-database-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            return try await body(.sqlite(path: folder.appendingPathComponent("kiosk.sqlite").path))
        case .postgres:
            return try await PostgresTestServer.withFreshDatabase { url in try await body(DatabaseURL(parsing: url)) }
        }
    }

    /// Runs one statement on the test server's own database, over a connection of its own.
    static func administer(_ server: DatabaseURL.Postgres, _ statement: String) async throws {
        try await PostgresTestServer.administer(server, statement)
    }
}

/// Whether the PostgreSQL cases run: reported as skipped when `KIOSK_TEST_POSTGRES_URL` is not set.
@Suite("PostgreSQL test server")
struct PostgreSQLTestServerTests {
    @Test(
        .enabled(
            if: TestDatabase.isPostgresConfigured,
            "KIOSK_TEST_POSTGRES_URL not set: the database tests run on SQLite only"))
    func theDatabaseTestsAlsoRunOnPostgreSQL() async throws {
        #expect(TestDatabase.engines.contains(.postgres))
        try await TestDatabase.with(.postgres) { database in
            try await database.checkReachable(timeout: TestDatabase.connectionWait)
        }
    }
}
