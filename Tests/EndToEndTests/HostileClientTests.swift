import Foundation
import KioskCore
import Testing

/// Clients that try to tie the server up: header and body drips (slowloris), hundreds of ranges, huge headers,
/// requests and downloads abandoned halfway, a reader that never reads. Each runs against `kiosk serve` with short
/// timeouts, in a child process of its own (``ServeProcess``) so that what is timed is the server's work and not
/// the test process's load, while a normal client checks that it still gets quick answers.
@Suite("Server: hostile clients", .serialized)
struct HostileClientTests {
    /// The short timeouts of every server here: idle 1 s, a whole request 2 s, a stalled send 2 s, heads of 8 KiB.
    private static let shortTimeouts = [
        "--idle-timeout", "1", "--request-timeout", "2", "--send-timeout", "2", "--max-header-size", "8192",
    ]

    /// Runs `body` with a fresh `kiosk serve` under the short timeouts (its content changed by `prepareContent`)
    /// and a quiet reference server with the same options, which no hostile client touches: the yardstick for
    /// ``expectResponsive(_:reference:_:)``, started first so that it is ready before any hostile traffic.
    private func withServers(
        prepareContent: (URL) throws -> Void = { _ in }, arguments: [String] = [],
        _ body: (_ server: ServeProcess, _ reference: ServeProcess) async throws -> Void
    ) async throws {
        try await ServeProcess.with(arguments: Self.shortTimeouts) { reference in
            try await ServeProcess.with(arguments: Self.shortTimeouts + arguments, prepareContent: prepareContent) {
                try await body($0, reference)
            }
        }
    }

    /// A normal client asks `server` and the quiet `reference` for `/healthz` in turn, three times each. A server
    /// held up by hostile clients answers only once they are cut (after a 1 s or 2 s timeout at the least, or
    /// never), every time; a loaded machine slows both servers alike. So `server`'s fastest answer must come within
    /// a second plus twice the reference's fastest: a bound measured in the same run, not a number of seconds.
    private func expectResponsive(
        _ server: ServeProcess, reference: ServeProcess, _ comment: Comment? = nil
    ) async throws {
        var fastest = Duration.seconds(15)
        var referenceFastest = Duration.seconds(15)
        for _ in 0..<3 {
            fastest = min(fastest, try await Self.healthzTime(server, comment))
            referenceFastest = min(referenceFastest, try await Self.healthzTime(reference, comment))
        }
        #expect(fastest < .seconds(1) + referenceFastest * 2, "reference: \(referenceFastest); \(comment ?? "")")
    }

    /// How long one `/healthz` of `server` took; expects a 200.
    private static func healthzTime(_ server: ServeProcess, _ comment: Comment?) async throws -> Duration {
        let start = ContinuousClock.now
        let response = try await RawHTTP.send(port: server.port, method: "GET", target: "/healthz", timeout: 15)
        #expect(response.status == 200, comment)
        return ContinuousClock.now - start
    }

    /// Polls `condition` until it holds or `timeout` passes.
    private func eventually(_ timeout: Duration, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try await condition()
    }

    /// Runs `drip` on `count` connections at once, each on its own thread; their results.
    private func onConnections<T: Sendable>(
        _ count: Int, port: Int, receiveBuffer: Int? = nil, _ drip: @escaping @Sendable (RawConnection) -> T
    ) -> [Task<T, any Error>] {
        (0..<count).map { _ in
            Task {
                try await RawConnection.onThread {
                    drip(try RawConnection(port: port, receiveBuffer: receiveBuffer))
                }
            }
        }
    }

    /// How long a dripping client goes on if the server never closes it: far beyond any timeout under test, only so
    /// that a server that lets drips run fails the test instead of hanging it. Not a measure of the server's speed.
    private static let dripSafetyBound = Duration.seconds(120)

    /// What the server did with a dripping connection.
    private struct DripOutcome: Sendable, CustomStringConvertible {
        /// Whether the server closed the connection (the drip never stops on its own before the safety bound).
        var closedByServer: Bool
        /// What the server sent before closing it.
        var answer: Data

        /// What a failed expectation shows.
        var description: String {
            "closed by the server: \(closedByServer), answer: \(String(decoding: answer.prefix(40), as: UTF8.self))"
        }
    }

    /// Sends `opening`, then `piece` every `interval`, until the server closes the connection or
    /// ``dripSafetyBound`` passes.
    private static func drip(
        _ connection: RawConnection, opening: String, piece: String, every interval: Duration
    ) -> DripOutcome {
        var answer = Data()
        guard connection.send(opening) else { return DripOutcome(closedByServer: true, answer: answer) }
        let deadline = ContinuousClock.now + dripSafetyBound
        while ContinuousClock.now < deadline {
            let (data, closed) = connection.receive(for: interval)
            answer.append(data)
            guard !closed, connection.send(piece) else { return DripOutcome(closedByServer: true, answer: answer) }
        }
        return DripOutcome(closedByServer: false, answer: answer)
    }

    /// A head that never ends: one header value a byte at a time, every 200 ms. It stays far below the limits on
    /// the head's size and field count for as long as it goes on, so the one thing that can end it is the idle
    /// timeout, which closes the connection without an answer. Decided by what the server did, not by how soon: a
    /// loaded machine closes them later, never not at all.
    @Test func headerDripsAreClosedByTheIdleTimeout() async throws {
        try await withServers { server, reference in
            let drips = onConnections(40, port: server.port) { connection in
                Self.drip(
                    connection, opening: "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Drip: ", piece: "a",
                    every: .milliseconds(200))
            }
            try await Task.sleep(for: .milliseconds(300))
            try await expectResponsive(server, reference: reference, "during header drips")
            for drip in drips {
                let outcome = try await drip.value
                #expect(outcome.closedByServer && outcome.answer.isEmpty, "\(outcome)")
            }
            try await expectResponsive(server, reference: reference, "after header drips")
        }
    }

    /// A body that never ends: a byte every 100 ms. Hummingbird's idle timeout restarts with each byte; the request
    /// timeout closes the connection, and the server counts each such close. Decided by what the server did (each
    /// drip closed by it, each close counted as a `request_read` timeout), not by how soon.
    @Test func bodyDripsAreClosedByTheRequestTimeout() async throws {
        try await withServers { server, reference in
            let drips = onConnections(20, port: server.port) { connection in
                Self.drip(
                    connection,
                    opening: "POST /v1/downloads HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + "Content-Length: 100000\r\n\r\n{",
                    piece: " ", every: .milliseconds(100))
            }
            try await Task.sleep(for: .milliseconds(300))
            try await expectResponsive(server, reference: reference, "during body drips")
            for drip in drips {
                let outcome = try await drip.value
                #expect(outcome.closedByServer, "\(outcome)")
            }
            #expect(try await server.metric("kiosk_connection_timeouts_total{reason=\"request_read\"}") == 20)
        }
    }

    @Test func aBodyGoingOnAfterA413DoesNotHoldTheConnection() async throws {
        try await withServers { server, reference in
            let results = onConnections(5, port: server.port) { connection -> (String, Duration?) in
                connection.send(
                    "POST /v1/downloads HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + "Content-Length: 100000000\r\n\r\n")
                // The status line, as soon as it comes (within seconds even on a loaded machine).
                let answer = connection.receive(for: .seconds(5), stopAfter: 12)
                let head = String(decoding: answer.data.prefix(12), as: UTF8.self)
                let start = ContinuousClock.now
                let filler = Data(repeating: 0x20, count: 1024)
                for _ in 0..<600 {
                    guard connection.send(filler), !connection.isClosed(within: .milliseconds(50)) else {
                        return (head, ContinuousClock.now - start)
                    }
                }
                return (head, nil)
            }
            try await expectResponsive(server, reference: reference, "while refused bodies keep coming")
            for result in results {
                let (head, closedAfter) = try await result.value
                #expect(head == "HTTP/1.1 413")
                // Closed at once by the server; the bound leaves room for a loaded machine. A connection held would
                // still be open when the 30 s of filler end (nil).
                #expect(
                    closedAfter != nil && closedAfter! < .seconds(20), "closed after \(String(describing: closedAfter))")
            }
        }
    }

    @Test func hundredsOfRangesAreAnsweredCheaply() async throws {
        try await withServers { server, reference in
            let purchase = try await server.buy(TestServer.Sample.book)
            let grant = try await server.grant(TestServer.Sample.book, receipt: purchase.receiptData)
            let file = try #require(grant.files.first)
            let auth = ("Authorization", "Bearer \(grant.token)")
            let hundreds = "bytes=" + (0..<500).map { "\($0 * 3)-\($0 * 3 + 1)" }.joined(separator: ",")
            #expect(hundreds.utf8.count < 8 * 1024)
            let sentBefore = try await server.metric("kiosk_content_bytes_sent_total")
            let many = try await server.send("GET", file.url, headers: [auth, ("Range", hundreds)])
            #expect(many.status == 200)
            #expect(many.body.count == file.length)
            let overlapping = "bytes=" + Array(repeating: "0-", count: 300).joined(separator: ",")
            let whole = try await server.send("GET", file.url, headers: [auth, ("Range", overlapping)])
            #expect(whole.status == 200)
            // Cheap in work, not in a time a loaded machine may miss: each answer is the file once (no 500 parts, no
            // 300 copies), and the server still answers at once.
            let sent = try await server.metric("kiosk_content_bytes_sent_total") - sentBefore
            #expect(sent == Double(2 * file.length))
            try await expectResponsive(server, reference: reference)
        }
    }

    /// Decided by what the server did with each head, not by how soon: it answered 400, or closed the connection
    /// (a reset can overtake the 400). A server that held the connection would leave the client to give up on its own
    /// read timeout, which fails.
    @Test func hugeHeadersAreRefused() async throws {
        try await withServers { server, reference in
            for headers in [
                [("X-Huge", String(repeating: "a", count: 9 * 1024))],
                (0..<150).map { ("X-Many-\($0)", "v") },
                [("Range", "bytes=" + (0..<3000).map { "\($0)-\($0)" }.joined(separator: ","))],
            ] {
                do {
                    let response = try await RawHTTP.send(
                        port: server.port, method: "GET", target: "/healthz", headers: headers, timeout: 30)
                    #expect(response.status == 400)
                } catch let failure as RawHTTP.Failure {
                    // The server may close before the client has read its answer (a reset): refused all the same.
                    #expect(!failure.description.hasSuffix("errno \(EAGAIN)"), "the client timed out: \(failure)")
                }
                try await expectResponsive(server, reference: reference)
            }
        }
    }

    @Test func abandonedRequestsAndDownloadsReleaseEverything() async throws {
        try await withServers { server, reference in
            let purchase = try await server.buy(TestServer.Sample.magazine)
            let grant = try await server.grant(TestServer.Sample.magazine, receipt: purchase.receiptData)
            let file = try #require(grant.files.first { $0.path == "Contents/issue.pdf" })
            let request = "GET \(file.url) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(grant.token)\r\n\r\n"
            let downloads = onConnections(30, port: server.port) { connection -> Int in
                connection.send(request)
                return connection.receive(for: .milliseconds(20)).data.count
            }
            let uploads = onConnections(30, port: server.port) { connection -> Bool in
                connection.send(
                    "POST /v1/downloads HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"
                        + String(repeating: " ", count: 1000))
            }
            for task in downloads { _ = try await task.value }
            for task in uploads { _ = try await task.value }
            try await expectResponsive(server, reference: reference, "after abandoned requests")
            let drained = try await eventually(.seconds(5)) {
                try await server.metric("kiosk_content_active_streams") == 0
            }
            #expect(drained, "content streams still open")
        }
    }

    @Test func aReaderThatNeverReadsIsClosedByTheSendTimeout() async throws {
        try await withServers(prepareContent: Self.addBigFile) { server, reference in
            try await expectReadersThatNeverReadAreClosed(server, reference: reference)
        }
    }

    /// A body fault (here `corrupt` far into the body) moves the response off `sendfile` onto the fault writer:
    /// its writes run under the send timeout too, so a token holder asking for faults cannot hold connections.
    @Test func aReaderThatNeverReadsIsClosedByTheSendTimeoutWhenItAsksForABodyFault() async throws {
        try await withServers(prepareContent: Self.addBigFile, arguments: ["--faults", "none"]) { server, reference in
            try await expectReadersThatNeverReadAreClosed(
                server, reference: reference, extraHeaders: "Kiosk-Fault: corrupt=20MiB\r\n")
        }
    }

    /// Adds `Contents/big.bin` (24 MiB) to the sample magazine.
    private static func addBigFile(_ content: URL) throws {
        try Data(repeating: 0xA5, count: 24 << 20).write(
            to: content.appendingPathComponent(TestServer.Sample.magazine).appendingPathComponent("Contents/big.bin"))
    }

    /// Three clients ask for the magazine's 24 MiB file and never read: the server stays responsive and closes each
    /// of them after its send timeout.
    private func expectReadersThatNeverReadAreClosed(
        _ server: ServeProcess, reference: ServeProcess, extraHeaders: String = ""
    ) async throws {
        let purchase = try await server.buy(TestServer.Sample.magazine)
        let grant = try await server.grant(TestServer.Sample.magazine, receipt: purchase.receiptData)
        let file = try #require(grant.files.first { $0.path == "Contents/big.bin" })
        let request =
            "GET \(file.url) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(grant.token)\r\n\(extraHeaders)\r\n"
        let stalled = onConnections(3, port: server.port, receiveBuffer: 4096) { connection -> Bool in
            connection.send(request)
            // Never read; keep the socket open until the server has given up on it.
            Thread.sleep(forTimeInterval: 6)
            return true
        }
        try await Task.sleep(for: .milliseconds(500))
        try await expectResponsive(server, reference: reference, "while readers stall")
        let timedOut = try await eventually(.seconds(6)) {
            try await server.metric("kiosk_connection_timeouts_total{reason=\"send\"}") >= 3
        }
        #expect(timedOut)
        #expect(try await eventually(.seconds(2)) { try await server.metric("kiosk_content_active_streams") == 0 })
        for task in stalled { _ = try await task.value }
    }
}
