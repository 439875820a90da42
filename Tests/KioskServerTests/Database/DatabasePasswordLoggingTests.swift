import Foundation
import KioskServerTestSupport
import Logging
import Testing

@testable import KioskServer

/// The database password never reaches the logs: not when the server starts on PostgreSQL, not when it cannot.
@Suite("Database password: never logged")
struct DatabasePasswordLoggingTests {
    /// Everything `log` recorded, as text: messages and metadata.
    static func text(of log: LogRecorder) -> String {
        log.entries.map { "\($0.level) \($0.message) \($0.metadata)" }.joined(separator: "\n")
    }

    /// A configuration on fresh content and data folders, serving on an ephemeral port, with `database`.
    static func configuration(
        database: DatabaseURL, content: ServerTestDirectory, data: ServerTestDirectory
    ) throws -> ServerConfiguration {
        try content.writeProduct(id: "com.example.issue")
        var configuration = ServerConfiguration.forTests(content: content.url, data: data.url)
        configuration.database = database
        return configuration
    }

    @Test func aServerThatCannotReachItsDatabaseSaysWhichWithoutThePassword() async throws {
        let password = "never-in-logs-\(UUID().uuidString)"
        // Nothing listens on port 1 of the loopback address: the connection is refused at once.
        let url = try DatabaseURL(parsing: "postgres://kiosk:\(password)@127.0.0.1:1/kiosk?sslmode=disable")
        let (content, data) = (try ServerTestDirectory("db-log-content"), try ServerTestDirectory("db-log-data"))
        let log = LogRecorder()
        await #expect {
            _ = try await KioskHTTPServer(
                configuration: try Self.configuration(database: url, content: content, data: data), logger: log.logger)
        } throws: { error in
            let message = "\(error)"
            return message.contains("postgres://kiosk:***@127.0.0.1:1/kiosk") && !message.contains(password)
        }
        #expect(!Self.text(of: log).contains(password))
    }

    /// PostgreSQL only: SQLite has no password.
    @Test(.enabled(if: TestDatabase.isPostgresConfigured, "KIOSK_TEST_POSTGRES_URL not set"))
    func aServerStartingOnPostgreSQLLogsTheURLWithoutThePassword() async throws {
        try await TestDatabase.withURL(.postgres) { url in
            guard case .postgres(let server) = url.location, let password = server.password, !password.isEmpty else {
                Issue.record("\(TestDatabase.postgresVariable) must carry a password for this test")
                return
            }
            let (content, data) = (try ServerTestDirectory("db-log-content"), try ServerTestDirectory("db-log-data"))
            let log = LogRecorder()
            let live = try await LiveKioskServer.start(
                configuration: try Self.configuration(database: url, content: content, data: data), logger: log.logger)
            await live.stop()
            let text = Self.text(of: log)
            #expect(!text.contains(password))
            #expect(text.contains("database open"))
            #expect(text.contains(url.description), "the redacted URL is logged")
            #expect(text.contains("database schema migrated"))
        }
    }
}
