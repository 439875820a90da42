import AsyncHTTPClient
import Foundation
import KioskCore
import KioskServerTestSupport
import Testing

@testable import KioskServer

/// `GET /readyz` of a server on PostgreSQL while its database stops taking connections (#30): 503 `not_ready`
/// within the readiness timeout, and ready again once the database is back; `/healthz` says alive throughout.
@Suite("Readiness on PostgreSQL")
struct ReadinessOnPostgreSQLTests {
    static func get(_ port: Int, _ path: String) async throws -> (status: Int, body: Data) {
        let response = try await HTTPClient.shared.execute(
            HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"), timeout: .seconds(60))
        return (Int(response.status.code), Data(buffer: try await response.body.collect(upTo: 1 << 20)))
    }

    /// Whether `/readyz` answers 200 within 60 tries, each at most the readiness timeout, 250 ms apart.
    static func readyzBecomes200(_ port: Int) async throws -> Bool {
        for _ in 0..<60 {
            if try await get(port, "/readyz").status == 200 { return true }
            try await Task.sleep(for: .milliseconds(250))
        }
        return false
    }

    @Test(.enabled(if: TestDatabase.isPostgresConfigured, "KIOSK_TEST_POSTGRES_URL not set: needs PostgreSQL"))
    func readyzAnswers503WhileTheDatabaseRefusesConnectionsAndRecovers() async throws {
        try await TestDatabase.withURL(.postgres) { url in
            guard case .postgres(let database) = url.location else { return }
            let server = try TestDatabase.postgresServer()
            let content = try ServerTestDirectory("readyz-content")
            let data = try ServerTestDirectory("readyz-data")
            var configuration = ServerConfiguration.forTests(content: content.url, data: data.url)
            configuration.database = url
            let live = try await LiveKioskServer.start(configuration: configuration, logger: LogRecorder().logger)
            do {
                // Ready once its database answers a ping within the 2 s: on a loaded machine not always the first time.
                #expect(try await Self.readyzBecomes200(live.port), "never ready before the outage")

                // The database goes away for this instance: no new connection, the open ones ended.
                try await TestDatabase.administer(
                    server, "ALTER DATABASE \(database.database) WITH ALLOW_CONNECTIONS false")
                try await TestDatabase.administer(
                    server,
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database.database)'")
                let down = try await Self.get(live.port, "/readyz")
                #expect(down.status == 503)
                let envelope = try KioskJSON.decode(APIErrorEnvelope.self, from: down.body)
                #expect(envelope.error.code == "not_ready")
                #expect(!String(decoding: down.body, as: UTF8.self).contains(server.password ?? "\u{0}"))
                #expect(try await Self.get(live.port, "/healthz").status == 200)

                // Back: the pool connects again (bounded: 60 tries, each at most the readiness timeout).
                try await TestDatabase.administer(
                    server, "ALTER DATABASE \(database.database) WITH ALLOW_CONNECTIONS true")
                #expect(try await Self.readyzBecomes200(live.port), "never ready again after the outage")
            } catch {
                await live.stop()
                throw error
            }
            await live.stop()
        }
    }
}
