import Foundation
import KioskCore
import KioskServer
import Logging
import SQLKit
import Testing

/// The `kiosk serve` binary itself, started as an operator would.
@Suite("kiosk serve: options, environment and defaults", .timeLimit(.minutes(2)))
struct ServeCommandTests {
    @Test func anOptionWinsOverItsEnvironmentVariable() async throws {
        // The reproduction: KIOSK_MAX_INSTALLATIONS=3 kiosk serve --max-installations 5 served 3.
        try await ServeProcess.with(
            arguments: ["--max-installations", "5"], environment: ["KIOSK_MAX_INSTALLATIONS": "3"]
        ) { server in
            let purchase = try await server.buy(TestServer.Sample.book)
            for installation in 1...5 {
                _ = try await server.grant(
                    TestServer.Sample.book, proof: .receipt(purchase.receiptData),
                    installationID: "installation-\(installation)")
            }
            let sixth = try await server.post(
                "/v1/downloads",
                GrantRequest(
                    proof: .receipt(purchase.receiptData), productID: TestServer.Sample.book,
                    installationID: "installation-6"))
            #expect(sixth.status == 403)
            #expect(try KioskJSON.decode(APIErrorEnvelope.self, from: sixth.body).error.code == "installation_limit")
        }
    }

    @Test(
        "--offload and KIOSK_OFFLOAD hand admitted files to nginx",
        arguments: [(["--offload", "nginx:/_kiosk/files"], [:]), ([], ["KIOSK_OFFLOAD": "nginx:/_kiosk/files"])]
            as [([String], [String: String])])
    func offload(arguments: [String], environment: [String: String]) async throws {
        try await ServeProcess.with(arguments: arguments, environment: environment) { server in
            let purchase = try await server.buy(TestServer.Sample.book)
            let grant = try await server.grant(TestServer.Sample.book, receipt: purchase.receiptData)
            let file = try #require(grant.files.first)
            let answer = try await server.send("GET", file.url, headers: [("Authorization", "Bearer \(grant.token)")])
            #expect(answer.status == 200 && answer.body.isEmpty)
            let redirect = "/_kiosk/files-full/\(TestServer.Sample.book)/\(grant.contentVersion)/\(file.path)"
            #expect(answer.header("X-Accel-Redirect") == redirect)
        }
    }

    @Test func offloadAndFaultsTogetherStopTheServer() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-serve-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let message = try await failedStart(data: data, ["--offload", "nginx:/_kiosk/files", "--faults", "none"])
        #expect(message.contains("--faults cannot be used with --offload"), "\(message)")
    }

    /// Runs `kiosk serve` on the sample content with `data` as its data folder and `arguments`, expecting it to stop
    /// at start; returns what it printed on standard error.
    private func failedStart(data: URL, _ arguments: [String]) async throws -> String {
        let outcome = try await ChildProcess.runKiosk(
            ["serve", "--port", "0", "--content", TestServer.sampleContent.path, "--data", data.path] + arguments,
            timeLimit: .seconds(60))
        #expect(outcome.exitStatus != nil && outcome.exitStatus != 0, "\(outcome)")
        return outcome.standardError
    }

    @Test func aBadDatabaseURLStopsTheServerWithAMessageThatHidesThePassword() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-db-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let message = try await failedStart(
            data: data, ["--database", "postgres://kiosk:hunter2@db.internal/kiosk?sslmode=maybe"])
        #expect(message.contains("--database") && message.contains("sslmode must be"), "\(message)")
        #expect(message.contains("postgres://kiosk:***@db.internal/kiosk"), "\(message)")
        #expect(!message.contains("hunter2"))
    }

    @Test func aDatabaseOfANewerReleaseStopsTheServer() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-db-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: data) }
        let database = try await KioskDatabase.open(
            .sqlite(path: data.appendingPathComponent("kiosk.sqlite").path),
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        do {
            try await database.sql.raw(
                """
                INSERT INTO kiosk_schema_migrations (version, summary, applied_at_ms)
                VALUES (\(bind: SchemaMigrations.latestVersion + 1), 'from the future', 0)
                """
            ).run()
            try await database.close()
        } catch {
            try? await database.close()
            throw error
        }
        let message = try await failedStart(data: data, [])
        #expect(message.contains("newer than this release of Kiosk knows"), "\(message)")
    }
}
