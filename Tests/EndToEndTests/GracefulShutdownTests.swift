import Foundation
import KioskCore
import KioskServerTestSupport
import Testing

/// `SIGTERM` with a download in flight (#30): `kiosk serve` stops accepting connections, lets the responses in
/// flight finish for up to `--shutdown-grace`, cuts those still running then, and exits. Each test starts a real
/// `kiosk serve` whose content responses are throttled, so that a download is still on its way when the signal
/// comes; the checks are on bytes and on a lower bound of time (a loaded machine only makes things later).
@Suite("Graceful shutdown")
struct GracefulShutdownTests {
    static let path = "Contents/issue.pdf"

    /// A started download of the sample magazine's issue (1.2 MB), its first bytes read: the connection, how many
    /// body bytes the whole answer has, and what arrived so far.
    static func startDownload(on server: ServeProcess) async throws -> (RawConnection, length: Int, Data) {
        let purchase = try await server.buy(TestServer.Sample.magazine)
        let grant = try await server.grant(TestServer.Sample.magazine, receipt: purchase.receiptData)
        let file = try #require(grant.files.first { $0.path == path })
        let target = try #require(URLComponents(string: file.url)?.path)
        let connection = try RawConnection(port: server.port)
        connection.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(grant.token)\r\n\r\n")
        let first = try await RawConnection.onThread { connection.receive(for: .seconds(30), stopAfter: 32 << 10) }
        try #require(!first.closed && first.data.count >= 32 << 10, "no first bytes: \(first.data.count)")
        return (connection, Int(file.length), first.data)
    }

    /// The body bytes in what arrived: everything after the head.
    static func bodyLength(_ received: Data) -> Int {
        guard let end = received.firstRange(of: Data("\r\n\r\n".utf8)) else { return 0 }
        return received.count - end.upperBound
    }

    /// The engines `kiosk serve` is stopped on: SQLite always, PostgreSQL too when the tests have a server
    /// (``PostgresTestServer``), so that stopping also closes the pool and the `LISTEN` connection in time.
    static let engines = PostgresTestServer.isConfigured ? ["sqlite", "postgres"] : ["sqlite"]

    /// Runs `body` with `kiosk serve` and `arguments` on `engine`'s database: SQLite in its data folder, or a fresh
    /// PostgreSQL database.
    static func withServer(
        on engine: String, arguments: [String], _ body: (ServeProcess) async throws -> Void
    ) async throws {
        guard engine == "postgres" else { return try await ServeProcess.with(arguments: arguments, body) }
        try await PostgresTestServer.withFreshDatabase { url in
            try await ServeProcess.with(arguments: arguments + ["--database", url], body)
        }
    }

    @Test(arguments: engines)
    func aDownloadInFlightFinishesWithinTheGraceAndTheServerExits(engine: String) async throws {
        // 256 KiB/s: the 1.2 MB issue takes about 5 s, far less than the grace.
        try await Self.withServer(on: engine, arguments: ["--faults", "throttle=256KiB/s", "--shutdown-grace", "120"]) {
            server in
            let (connection, length, first) = try await Self.startDownload(on: server)
            server.terminate()
            let rest = try await RawConnection.onThread { connection.receive(for: .seconds(120)) }
            #expect(Self.bodyLength(first + rest.data) == length, "the download in flight was cut")
            // No new connection is served any more.
            await #expect(throws: (any Error).self) { _ = try await server.send("GET", "/healthz") }
            #expect(try await server.exitStatus(within: .seconds(60)) == 0)
        }
    }

    @Test func aDownloadStillRunningAtTheEndOfTheGraceIsCutThenAndNotBefore() async throws {
        // 32 KiB/s: the issue would take about 37 s; the grace is 2 s.
        try await ServeProcess.with(arguments: ["--faults", "throttle=32KiB/s", "--shutdown-grace", "2"]) { server in
            let (connection, length, first) = try await Self.startDownload(on: server)
            let signalled = ContinuousClock.now
            server.terminate()
            let rest = try await RawConnection.onThread { connection.receive(for: .seconds(60)) }
            let cutAfter = ContinuousClock.now - signalled
            #expect(rest.closed, "the connection stayed open past the grace")
            #expect(Self.bodyLength(first + rest.data) < length)
            #expect(cutAfter >= .seconds(2), "cut after \(cutAfter), before the grace ended")
            #expect(try await server.exitStatus(within: .seconds(60)) == 0)
        }
    }
}

/// `GET /readyz` on a running `kiosk serve`: ready, with what each check found.
@Suite("Readiness end to end")
struct ReadinessEndToEndTests {
    @Test func aRunningServerIsReady() async throws {
        try await TestServer.with { server in
            let answer = try await server.send("GET", "/readyz")
            #expect(answer.status == 200)
            let readiness = try KioskJSON.decode(ReadinessResponse.self, from: answer.body)
            #expect(readiness.status == "ready")
            #expect(readiness.checks["database"] == "ok")
            #expect(readiness.checks["catalog"]?.hasPrefix("4 products") == true, "\(readiness.checks)")
        }
    }
}
