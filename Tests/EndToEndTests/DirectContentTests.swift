import Foundation
import KioskCore
import KioskServer
import Testing

/// Content answers the event loops give themselves (`DirectContent`): a file already open, with at most one range,
/// sent exactly as the content route sends it; every other content request is the route's, and requests pipelined
/// behind a body wait for it.
@Suite("Server: content answers from the event loop")
struct DirectContentTests {
    static let direct = #"kiosk_http_direct_answers_total{route="/v1/content/**"}"#

    /// A granted file of the sample book, and its `Authorization` header.
    static func grantedFile(on server: TestServer) async throws -> (url: String, auth: (String, String), length: Int) {
        let purchase = try await server.buy(TestServer.Sample.book)
        let grant = try await server.grant(TestServer.Sample.book, receipt: purchase.receiptData)
        let file = try #require(grant.files.max { $0.length < $1.length })
        return (file.url, ("Authorization", "Bearer \(grant.token)"), Int(file.length))
    }

    @Test func theEventLoopSendsContentExactlyAsTheRouteDoes() async throws {
        try await TestServer.with { server in
            let (url, auth, length) = try await Self.grantedFile(on: server)
            #expect(length > 20)
            // The first request opens the file (the route's); from then on the event loop answers.
            let first = try await server.send("GET", url, headers: [auth])
            #expect(first.status == 200 && first.body.count == length)
            let tag = try #require(first.header("ETag"))
            let modified = try #require(first.header("Last-Modified"))
            let token = String(auth.1.dropFirst("Bearer ".count))
            let cases: [(method: String, headers: [(String, String)], status: Int)] = [
                ("GET", [], 200), ("HEAD", [], 200),
                ("GET", [("Range", "bytes=0-9")], 206), ("GET", [("Range", "bytes=-5")], 206),
                ("GET", [("Range", "bytes=10-")], 206), ("HEAD", [("Range", "bytes=0-9")], 200),
                ("GET", [("If-None-Match", tag)], 304), ("HEAD", [("If-Modified-Since", modified)], 304),
                ("GET", [("Range", "bytes=3-7"), ("If-Range", tag)], 206),
                ("GET", [("Range", "bytes=3-7"), ("If-Range", "\"other\"")], 200),
                ("GET", [("If-Match", tag), ("Range", "bytes=1-1")], 206),
                // The route's, both ways: the envelope or several parts.
                ("GET", [("If-Match", "\"other\"")], 412), ("GET", [("Range", "bytes=\(length + 5)-")], 416),
                ("GET", [("Range", "bytes=0-1, 5-6")], 206),
            ]
            // A percent-encoded byte in the path is always the route's (the router decodes it).
            let last = try #require(url.last?.asciiValue)
            let routedURL = String(url.dropLast()) + String(format: "%%%02X", last)
            let before = try await server.metric(Self.direct)
            for (method, headers, status) in cases {
                let direct = try await server.send(method, url, headers: [auth] + headers)
                let routed = try await server.send(method, routedURL, headers: [auth] + headers)
                let name = "\(method) \(headers)"
                #expect(direct.status == status, "\(name)")
                #expect(routed.status == status, "\(name)")
                if direct.header("Content-Type")?.hasPrefix("multipart/byteranges") != true {
                    #expect(DirectAnswerTests.comparable(direct) == DirectAnswerTests.comparable(routed), "\(name)")
                    #expect(direct.body == routed.body, "\(name)")
                }
                #expect(direct.header("Date") != nil && direct.header("X-Request-ID") != nil, "\(name)")
            }
            // Every case but the three the route answers was the event loop's.
            #expect(try await server.metric(Self.direct) == before + Double(cases.count - 3))
            // The token in the query, for clients that cannot set headers, as the route reads it.
            let queried = try await server.send("GET", url + "?token=\(token)", headers: [("Range", "bytes=0-9")])
            #expect(queried.status == 206 && queried.body == first.body.prefix(10))
            #expect(try await server.metric(Self.direct) == before + Double(cases.count - 2))
            #expect(try await server.send("GET", url + "?token=nope").status == 401)
            let whole = try await server.send("GET", url, headers: [auth])
            #expect(whole.body == first.body)
            let part = try await server.send("GET", url, headers: [auth, ("Range", "bytes=-5")])
            #expect(part.body == first.body.suffix(5))
            #expect(part.header("Content-Range") == "bytes \(length - 5)-\(length - 1)/\(length)")
        }
    }

    @Test func refusalsAreTheRoutesWithTheirEnvelopeAndTheirMetric() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(TestServer.Sample.book)
            let grant = try await server.grant(TestServer.Sample.book, receipt: purchase.receiptData)
            let url = try #require(grant.files.first).url
            let auth = ("Authorization", "Bearer \(grant.token)")
            #expect(try await server.send("GET", url, headers: [auth]).status == 200)
            let before = try await server.metric(Self.direct)
            for (headers, status, code) in [
                ([(String, String)](), 401, "token_missing"),
                ([("Authorization", "Bearer nope")], 401, "token_invalid"),
                ([("Authorization", "Basic \(grant.token)")], 401, "token_missing"),
            ] {
                let response = try await server.send("GET", url, headers: headers)
                #expect(response.status == status, "\(headers)")
                #expect(try KioskJSON.decode(APIErrorEnvelope.self, from: response.body).error.code == code)
            }
            _ = try await server.notify(purchase.transactionID, .refund)
            let revoked = try await server.send("GET", url, headers: [auth])
            #expect(revoked.status == 403)
            #expect(try KioskJSON.decode(APIErrorEnvelope.self, from: revoked.body).error.code == "transaction_revoked")
            #expect(try await server.metric("kiosk_revoked_token_refusals_total") == 1)
            #expect(try await server.metric(Self.direct) == before)
        }
    }

    /// A catalog request and a range pipelined behind a whole file wait for its body, then come in order.
    @Test func requestsPipelinedBehindABodyWaitForIt() async throws {
        try await TestServer.with { server in
            let (url, auth, length) = try await Self.grantedFile(on: server)
            let whole = try await server.send("GET", url, headers: [auth])
            let request = { (extra: String) in "GET \(url) HTTP/1.1\r\nHost: k\r\n\(auth.0): \(auth.1)\r\n\(extra)\r\n"
            }
            let connection = try RawConnection(port: server.port)
            connection.send(
                request("X-Request-ID: one\r\n")
                    + "GET /v1/products HTTP/1.1\r\nHost: k\r\nX-Request-ID: two\r\n\r\n"
                    + request("Range: bytes=2-4\r\nX-Request-ID: three\r\n")
                    + "POST /v1/downloads HTTP/1.1\r\nHost: k\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 2\r\nX-Request-ID: four\r\n\r\n{}"
                    + request("X-Request-ID: five\r\nConnection: close\r\n")
                    + request("X-Request-ID: after-close\r\n"))
            let received = try await RawConnection.onThread { connection.receive(for: .seconds(30)) }
            #expect(received.closed)
            let answers = try DirectAnswerTests.responses(in: received.data)
            #expect(answers.map(\.status) == [200, 200, 206, 400, 200])
            #expect(answers.map { $0.header("X-Request-ID") ?? "" } == ["one", "two", "three", "four", "five"])
            #expect(answers[0].body == whole.body && answers[4].body == whole.body)
            #expect(answers[0].body.count == length)
            #expect(answers[2].body == whole.body.subdata(in: 2..<5))
        }
    }

    @Test func aFileNotOpenYetOrWithFaultsIsTheRoutes() async throws {
        try await TestServer.with(configure: { $0.faults = .spec(try! FaultSpec(parsing: "throttle=1GiB/s")) }) {
            server in
            let (url, auth, _) = try await Self.grantedFile(on: server)
            for _ in 0..<3 { #expect(try await server.send("GET", url, headers: [auth]).status == 200) }
            #expect(try await server.metric(Self.direct) == 0)
            #expect(try await server.metric(#"kiosk_http_direct_answers_total{route="/v1/products"}"#) == 0)
            _ = try await server.send("GET", "/v1/products")
            #expect(try await server.metric(#"kiosk_http_direct_answers_total{route="/v1/products"}"#) == 1)
        }
    }
}

/// Direct content bodies at the edges of a connection's life, on `kiosk serve`: a client that stops reading, and
/// the server shutting down while a body is on its way.
@Suite("Server: content bodies from the event loop, cut and finished")
struct DirectContentBodyTests {
    /// Adds `Contents/big.bin` (24 MiB, far more than the kernel's socket buffers hold) to the sample magazine.
    static func addBigFile(_ content: URL) throws {
        try Data((0..<(24 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(
            to: content.appendingPathComponent(TestServer.Sample.magazine).appendingPathComponent("Contents/big.bin"))
    }

    /// The big file's request, after a `HEAD` that opened it (so that the `GET` is the event loop's).
    static func openedBigFile(on server: ServeProcess) async throws -> (request: String, length: Int) {
        let purchase = try await server.buy(TestServer.Sample.magazine)
        let grant = try await server.grant(TestServer.Sample.magazine, receipt: purchase.receiptData)
        let file = try #require(grant.files.first { $0.path == "Contents/big.bin" })
        let auth = ("Authorization", "Bearer \(grant.token)")
        #expect(try await server.send("HEAD", file.url, headers: [auth]).status == 200)
        return ("GET \(file.url) HTTP/1.1\r\nHost: x\r\n\(auth.0): \(auth.1)\r\n\r\n", Int(file.length))
    }

    @Test func aReaderThatNeverReadsIsCutByTheSendTimeout() async throws {
        try await ServeProcess.with(arguments: ["--send-timeout", "2"], prepareContent: Self.addBigFile) { server in
            let (request, _) = try await Self.openedBigFile(on: server)
            let connection = try RawConnection(port: server.port, receiveBuffer: 4096)
            connection.send(request)
            // Never read: the server gives up on the connection after its send timeout (polled for at most 60 s).
            let timeouts = #"kiosk_connection_timeouts_total{reason="send"}"#
            for _ in 0..<600 where try await server.metric(timeouts) == 0 {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await server.metric(timeouts) == 1)
            let rest = try await RawConnection.onThread { connection.receive(for: .seconds(30)) }
            #expect(rest.closed && rest.data.count < 24 << 20)
            #expect(try await server.metric(DirectContentTests.direct) == 1)
            #expect(try await server.metric("kiosk_content_active_streams") == 0)
        }
    }

    /// The application's long answer, a long body from the event loop sent as soon as it is over, and the
    /// application's again, on one connection. Each fills the socket; the event loop's body makes the channel
    /// unwritable and writable again many times, which the application's writer does not hear of while it is
    /// sent, and the application's answers on either side of it still finish.
    @Test func theApplicationsLongAnswersAroundALongBodyAllFinish() async throws {
        try await ServeProcess.with(prepareContent: Self.addBigFile) { server in
            let (request, length) = try await Self.openedBigFile(on: server)
            let ranges = "Range: bytes=0-999999,2000000-3999999\r\n"
            let withRanges = request.replacingOccurrences(of: "\r\n\r\n", with: "\r\n\(ranges)\r\n")
            let connection = try RawConnection(port: server.port)
            connection.send(withRanges)
            // Most of the application's answer has arrived: its end is written, or about to be.
            let first = try await RawConnection.onThread { connection.receive(for: .seconds(60), stopAfter: 2_900_000) }
            connection.send(
                request + withRanges.replacingOccurrences(of: ranges, with: ranges + "Connection: close\r\n"))
            let rest = try await RawConnection.onThread { connection.receive(for: .seconds(120)) }
            #expect(rest.closed)
            let answers = try DirectAnswerTests.responses(in: first.data + rest.data)
            #expect(answers.map(\.status) == [206, 200, 206])
            #expect(answers.count == 3 && answers[1].body.count == length)
            #expect(answers.count == 3 && answers[0].body.count > 3_000_000)
            #expect(answers.count == 3 && answers[0].body.count == answers[2].body.count)
            #expect(try await server.metric(DirectContentTests.direct) == 1)
        }
    }

    /// At a stop, a body on its way goes out whole before its connection closes; a connection that only ever had
    /// the event loop's answers (it never started the application's side) closes at once; the server exits.
    @Test func aBodyOnItsWayWhenTheServerStopsIsFinishedThenTheConnectionCloses() async throws {
        try await ServeProcess.with(arguments: ["--shutdown-grace", "120"], prepareContent: Self.addBigFile) {
            server in
            let (request, length) = try await Self.openedBigFile(on: server)
            let idle = try RawConnection(port: server.port)
            idle.send("GET /healthz HTTP/1.1\r\nHost: k\r\n\r\n")
            let health = try await RawConnection.onThread { idle.receive(for: .seconds(30), stopAfter: 100) }
            try #require(!health.closed && !health.data.isEmpty)
            let connection = try RawConnection(port: server.port, receiveBuffer: 4096)
            connection.send(request)
            let first = try await RawConnection.onThread { connection.receive(for: .seconds(30), stopAfter: 32 << 10) }
            try #require(!first.closed && first.data.count >= 32 << 10, "no first bytes: \(first.data.count)")
            server.terminate()
            #expect(try await RawConnection.onThread { idle.isClosed(within: .seconds(60)) }, "the idle one stayed")
            let rest = try await RawConnection.onThread { connection.receive(for: .seconds(120)) }
            #expect(rest.closed)
            #expect(GracefulShutdownTests.bodyLength(first.data + rest.data) == length, "the body was cut")
            #expect(try await server.exitStatus(within: .seconds(60)) == 0)
        }
    }

    /// A client that sends its requests and closes its side while the event loop sends it a body gets that body
    /// whole and the answers to the requests it sent after it, then the connection closes: on a connection that
    /// never needed the application's side, and on one that did.
    @Test(arguments: [false, true])
    func aClientThatClosesItsSideGetsEveryAnswerItAskedFor(routedFirst: Bool) async throws {
        try await ServeProcess.with(prepareContent: Self.addBigFile) { server in
            let (request, length) = try await Self.openedBigFile(on: server)
            let connection = try RawConnection(port: server.port, receiveBuffer: 16 << 10)
            let routed = routedFirst ? "GET /v1/nowhere HTTP/1.1\r\nHost: k\r\n\r\n" : ""
            connection.send(routed + request + "GET /healthz HTTP/1.1\r\nHost: k\r\n\r\n")
            let first = try await RawConnection.onThread { connection.receive(for: .seconds(30), stopAfter: 64 << 10) }
            try #require(!first.closed && first.data.count >= 64 << 10)
            connection.shutdownWrite()
            let rest = try await RawConnection.onThread { connection.receive(for: .seconds(120)) }
            #expect(rest.closed, "the connection stayed open")
            let answers = try DirectAnswerTests.responses(in: first.data + rest.data)
            #expect(answers.map(\.status) == (routedFirst ? [404] : []) + [200, 200])
            #expect(answers.dropLast().last?.body.count == length, "the body was cut")
            #expect(answers.last?.text == #"{"status":"ok"}"#)
            // Without a routed request before it, the body is the event loop's (after one, the application's).
            #expect(try await server.metric(DirectContentTests.direct) == (routedFirst ? 0 : 1))
        }
    }
}
