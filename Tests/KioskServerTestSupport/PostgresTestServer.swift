import Foundation
import KioskServer
import Logging
import PostgresNIO

/// The PostgreSQL server of the tests, named by `KIOSK_TEST_POSTGRES_URL` (`postgres://role:password@127.0.0.1:PORT/
/// postgres`, a role with CREATEDB; `.ci/run` starts one): fresh databases on it, one per test, dropped afterwards,
/// so that tests run in parallel. Without the variable, tests that need PostgreSQL say so and are skipped.
package enum PostgresTestServer {
    /// A statement of ``administer(_:_:)`` failed: the statement and PostgreSQL's full description.
    package struct Failed: Error, CustomStringConvertible {
        package var statement: String
        package var detail: String
        package var description: String { "\(statement): \(detail)" }

        /// A failure of `statement`, which PostgreSQL described as `detail`.
        package init(statement: String, detail: String) {
            self.statement = statement
            self.detail = detail
        }
    }

    /// `KIOSK_TEST_POSTGRES_URL` is not a `postgres://` URL.
    package struct NotAPostgresURL: Error, CustomStringConvertible {
        package var description: String { "\(PostgresTestServer.variable) must be a postgres:// URL" }
    }

    /// The variable naming the server.
    package static let variable = "KIOSK_TEST_POSTGRES_URL"

    /// The server's URL, when the variable is set and not empty.
    package static let url: String? = ProcessInfo.processInfo.environment[variable].flatMap { $0.isEmpty ? nil : $0 }

    /// Whether the variable is set.
    package static var isConfigured: Bool { url != nil }

    /// Why a PostgreSQL test is skipped.
    package static let unavailableReason = "\(variable) not set: needs a PostgreSQL server (.ci/postgres.sh)"

    /// Runs `body` with the URL of a new, empty database on the server (the server's URL with another database
    /// name: `kiosk_t_<random>`), and drops the database afterwards, whether `body` returns or throws. `body` closes
    /// what it opens.
    package static func withFreshDatabase<T>(_ body: (String) async throws -> T) async throws -> T {
        guard let url, var components = URLComponents(string: url),
            case .postgres(let server) = try DatabaseURL(parsing: url).location
        else { throw NotAPostgresURL() }
        let name = "kiosk_t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        components.path = "/" + name
        guard let fresh = components.string else { throw NotAPostgresURL() }
        try await administer(server, "CREATE DATABASE \(name)")
        do {
            let result = try await body(fresh)
            await drop(name, on: server)
            return result
        } catch {
            await drop(name, on: server)
            throw error
        }
    }

    /// Drops a test database, cleanup only: `WITH (FORCE)` ends the test's own connections, but not an autovacuum
    /// worker that PostgreSQL may have started on the fresh database (only a superuser may end that one: error
    /// 42501), so a refused drop is tried again for up to 10 s, then left to the cluster's removal.
    static func drop(_ name: String, on server: DatabaseURL.Postgres) async {
        for _ in 0..<20 {
            do {
                try await administer(server, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
                return
            } catch {
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    /// Runs one statement on the server's own database (the one its URL names), over a connection of its own.
    package static func administer(_ server: DatabaseURL.Postgres, _ statement: String) async throws {
        let logger = Logger(label: "kiosk.tests.postgres") { _ in SwiftLogNoOpLogHandler() }
        var configuration = PostgresConnection.Configuration(
            host: server.host, port: server.port, username: server.username, password: server.password,
            database: server.database, tls: .disable)
        // A loaded machine (the whole suite starting at once) may take long to connect; tests wait.
        configuration.options.connectTimeout = .seconds(120)
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            do {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                try await connection.close()
            } catch {
                try? await connection.close()
                throw error
            }
        } catch let error as PSQLError {
            // PSQLError describes itself generically; a failed test shows what the server said.
            throw Failed(statement: statement, detail: String(reflecting: error))
        }
    }
}
