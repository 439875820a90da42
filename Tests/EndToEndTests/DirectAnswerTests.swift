import Foundation
import KioskCore
import Testing

/// The catalog and health answers the event loops give without the router (`DirectAnswers`): the same answers as the
/// routes, in order with the application's answers on one connection, with the connection rules and the metrics of
/// every other answer.
@Suite("Server: answers from the event loop")
struct DirectAnswerTests {
    /// Headers that differ between two answers to the same request.
    static let perAnswer: Set<String> = ["x-request-id", "date"]

    static func comparable(_ response: RawHTTPResponse) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in response.headers where !perAnswer.contains(name.lowercased()) {
            headers[name.lowercased()] = value
        }
        return headers
    }

    @Test func theEventLoopAnswersExactlyAsTheRoutesDo() async throws {
        try await TestServer.with { server in
            let book = TestServer.Sample.book
            let tag = try #require(try await server.send("GET", "/v1/products").header("ETag"))
            let gzipTag = try #require(
                try await server.send("GET", "/v1/products", headers: [("Accept-Encoding", "gzip")]).header("ETag"))
            // Each pair: a request answered on the event loop, and one the router answers (a trailing slash or an
            // ignored query, which the event loop leaves to it) that must get the same answer.
            let pairs: [(method: String, direct: String, routed: String, headers: [(String, String)])] = [
                ("GET", "/v1/products", "/v1/products/", []),
                ("HEAD", "/v1/products", "/v1/products/", []),
                ("GET", "/v1/products", "/v1/products/", [("Accept-Encoding", "gzip")]),
                ("GET", "/v1/products", "/v1/products/", [("If-None-Match", tag)]),
                ("GET", "/v1/products", "/v1/products/", [("Accept-Encoding", "gzip"), ("If-None-Match", gzipTag)]),
                ("GET", "/v1/products?limit=2", "/v1/products/?limit=2", []),
                ("GET", "/v1/products?ids=\(book)", "/v1/products/?ids=\(book)", []),
                ("GET", "/v1/products/\(book)", "/v1/products/\(book)?v=1", []),
                ("HEAD", "/v1/products/\(book)", "/v1/products/\(book)?v=1", []),
            ]
            for pair in pairs {
                let direct = try await server.send(pair.method, pair.direct, headers: pair.headers)
                let routed = try await server.send(pair.method, pair.routed, headers: pair.headers)
                #expect(direct.status == routed.status, "\(pair.method) \(pair.direct)")
                #expect(Self.comparable(direct) == Self.comparable(routed), "\(pair.method) \(pair.direct)")
                #expect(direct.body == routed.body, "\(pair.method) \(pair.direct)")
                #expect(direct.header("Date") != nil && direct.header("X-Request-ID") != nil)
            }
            let health = try await server.send("GET", "/healthz")
            #expect(health.status == 200 && health.text == #"{"status":"ok"}"#)
            #expect(health.header("Content-Type") == "application/json; charset=utf-8")
            #expect(health.header("Content-Length") == "15")
        }
    }

    @Test func refusalsAndUnknownPathsStillGetTheEnvelope() async throws {
        try await TestServer.with { server in
            for (target, status, code) in [
                ("/v1/products?limit=0", 400, "bad_request"), ("/v1/products?cursor=nope", 400, "bad_request"),
                ("/v1/products/com.example.nope", 404, "not_found"), ("/v1/products/bad%20id", 400, "bad_request"),
            ] {
                let response = try await server.send("GET", target)
                #expect(response.status == status, "\(target)")
                #expect(
                    try KioskJSON.decode(APIErrorEnvelope.self, from: response.body).error.code == code, "\(target)")
            }
            #expect(try await server.send("HEAD", "/healthz").status == 404)
            // Other methods are the router's: refused with the envelope, never answered as a GET.
            let post = try await server.send("POST", "/v1/products")
            #expect(post.status >= 400)
            #expect((try? KioskJSON.decode(APIErrorEnvelope.self, from: post.body)) != nil)
        }
    }

    @Test func theRequestIDIsTheClientsWhenSaneOrAFreshOne() async throws {
        try await TestServer.with { server in
            let echoed = try await server.send("GET", "/v1/products", headers: [("X-Request-ID", "app-launch.42")])
            #expect(echoed.header("X-Request-ID") == "app-launch.42")
            let first = try #require(try await server.send("GET", "/healthz").header("X-Request-ID"))
            let second = try #require(
                try await server.send("GET", "/healthz", headers: [("X-Request-ID", "not sane!")]).header(
                    "X-Request-ID"))
            // Hummingbird's generated IDs: hex, a per-process prefix (up to 16 digits: it is not zero-padded, so one
            // process in 16 has a shorter one) and a 16-digit counter.
            for id in [first, second] {
                #expect((17...32).contains(id.count) && id.allSatisfy(\.isHexDigit), "\(id)")
            }
            #expect(first != second)
        }
    }

    @Test func directAnswersAreCountedLikeEveryOther() async throws {
        try await TestServer.with { server in
            let tag = try #require(try await server.send("GET", "/v1/products").header("ETag"))
            let series = #"kiosk_http_requests_total{method="GET",route="/v1/products",status="304"}"#
            let before = try await server.metric(series)
            for _ in 0..<3 { _ = try await server.send("GET", "/v1/products", headers: [("If-None-Match", tag)]) }
            #expect(try await server.metric(series) == before + 3)
            let product = #"kiosk_http_requests_total{method="HEAD",route="/v1/products/{id}",status="200"}"#
            _ = try await server.send("HEAD", "/v1/products/\(TestServer.Sample.book)")
            #expect(try await server.metric(product) == 1)
            let health = #"kiosk_http_requests_total{method="GET",route="/healthz",status="200"}"#
            let healthBefore = try await server.metric(health)
            _ = try await server.send("GET", "/healthz")
            #expect(try await server.metric(health) == healthBefore + 1)

            // One connection, the series alternating (a connection remembers the series it recorded last).
            let direct = #"kiosk_http_direct_answers_total{route="/v1/products"}"#
            let (before304, beforeHealth, beforeDirect) = (
                try await server.metric(series), try await server.metric(health), try await server.metric(direct)
            )
            let notModified = "GET /v1/products HTTP/1.1\r\nHost: k\r\nIf-None-Match: \(tag)\r\n\r\n"
            let connection = try RawConnection(port: server.port)
            connection.send(
                notModified + notModified + "GET /healthz HTTP/1.1\r\nHost: k\r\n\r\n" + notModified
                    + "GET /healthz HTTP/1.1\r\nHost: k\r\nConnection: close\r\n\r\n")
            let answers = try await RawConnection.onThread { connection.receive(for: .seconds(30)) }
            #expect(try Self.responses(in: answers.data).map(\.status) == [304, 304, 200, 304, 200])
            #expect(try await server.metric(series) == before304 + 3)
            #expect(try await server.metric(health) == beforeHealth + 2)
            #expect(try await server.metric(direct) == beforeDirect + 3)
        }
    }

    /// Pipelined requests: the application's answer to the first, then the event loop's to the rest, in order; a
    /// catalog request with a body is the application's; `Connection: close` ends the connection after its answer.
    @Test func pipelinedAnswersLeaveInTheOrderTheRequestsCame() async throws {
        try await TestServer.with { server in
            let connection = try RawConnection(port: server.port)
            let requests =
                "POST /v1/downloads HTTP/1.1\r\nHost: k\r\nContent-Type: application/json\r\n"
                + "Content-Length: 2\r\n\r\n{}"
                + "GET /v1/products HTTP/1.1\r\nHost: k\r\nX-Request-ID: second\r\n\r\n"
                + "GET /v1/products HTTP/1.1\r\nHost: k\r\nContent-Length: 5\r\nX-Request-ID: third\r\n\r\nhello"
                + "GET /healthz HTTP/1.1\r\nHost: k\r\nX-Request-ID: fourth\r\nConnection: close\r\n\r\n"
                + "GET /healthz HTTP/1.1\r\nHost: k\r\nX-Request-ID: after-close\r\n\r\n"
            connection.send(requests)
            let received = try await RawConnection.onThread { connection.receive(for: .seconds(30)) }
            #expect(received.closed)
            let answers = try Self.responses(in: received.data)
            #expect(answers.map(\.status) == [400, 200, 200, 200])
            #expect(answers.map { $0.header("X-Request-ID") ?? "" }.dropFirst() == ["second", "third", "fourth"])
            #expect(answers[1].body == answers[2].body)
            #expect(answers[3].text == #"{"status":"ok"}"#)
        }
    }

    @Test func aConnectionUsedOnlyForDirectAnswersStillMeetsTheIdleTimeout() async throws {
        try await TestServer.with(configure: { $0.idleTimeout = .seconds(1) }) { server in
            let connection = try RawConnection(port: server.port)
            connection.send("GET /v1/products HTTP/1.1\r\nHost: k\r\n\r\n")
            let first = try await RawConnection.onThread { connection.receive(for: .seconds(10), stopAfter: 100) }
            #expect(String(decoding: first.data.prefix(15), as: UTF8.self) == "HTTP/1.1 200 OK")
            #expect(try await RawConnection.onThread { connection.isClosed(within: .seconds(30)) })
        }
    }

    /// A connection whose first requests the event loop answers starts the application's side only when it needs
    /// it: a later request for the routes, one that does not parse, and a client's half-closure are each handled
    /// as on any other connection.
    @Test func aConnectionStartsTheApplicationsSideWhenItFirstNeedsIt() async throws {
        // A long idle timeout: whatever closes these connections, it is not the idle timer.
        try await TestServer.with(configure: { $0.idleTimeout = .seconds(600) }) { server in
            let direct = "GET /healthz HTTP/1.1\r\nHost: k\r\n\r\n"
            let routed = try RawConnection(port: server.port)
            routed.send(direct + direct + "GET /v1/nowhere HTTP/1.1\r\nHost: k\r\n\r\n" + direct)
            routed.send("GET /healthz HTTP/1.1\r\nHost: k\r\nConnection: close\r\n\r\n")
            let answers = try await RawConnection.onThread { routed.receive(for: .seconds(30)) }
            #expect(answers.closed)
            #expect(try Self.responses(in: answers.data).map(\.status) == [200, 200, 404, 200, 200])

            let malformed = try RawConnection(port: server.port)
            malformed.send(direct)
            _ = try await RawConnection.onThread { malformed.receive(for: .seconds(30), stopAfter: 12) }
            malformed.send("GET /healthz HTTP/1.1\r\nHost k\r\n\r\n")
            let refused = try await RawConnection.onThread { malformed.receive(for: .seconds(30)) }
            #expect(refused.closed)
            #expect(String(decoding: refused.data, as: UTF8.self).contains("HTTP/1.1 400 Bad Request"))

            let halfClosed = try RawConnection(port: server.port)
            halfClosed.send(direct)
            halfClosed.shutdownWrite()
            let received = try await RawConnection.onThread { halfClosed.receive(for: .seconds(30)) }
            #expect(received.closed)
            #expect(try Self.responses(in: received.data).map(\.status) == [200])
        }
    }

    /// On one connection, answers from the event loop and from the routes alternate with `GET` and `HEAD`: each
    /// answer to `HEAD` has no body and each answer to `GET` its whole body, whatever the answer before it (SwiftNIO's
    /// response encoder, which frames answers to `HEAD` by the requests it saw, never sees the event loop's).
    @Test func answersToHeadAndGetKeepTheirFramingWhoeverAnswersThem() async throws {
        try await TestServer.with { server in
            let book = TestServer.Sample.book
            // (method, target, status, the routes answer it)
            let requests: [(String, String, Int, Bool)] = [
                ("GET", "/healthz", 200, false), ("HEAD", "/v1/nowhere", 404, true),
                ("HEAD", "/v1/products", 200, false), ("GET", "/v1/nowhere", 404, true),
                ("GET", "/v1/products/\(book)", 200, false), ("HEAD", "/v1/products/com.example.nope", 404, true),
                ("HEAD", "/v1/products/\(book)", 200, false), ("GET", "/v1/products/com.example.nope", 404, true),
                ("HEAD", "/v1/content/\(book)/1/a.pdf", 401, true), ("GET", "/healthz", 200, false),
            ]
            let connection = try RawConnection(port: server.port)
            for (index, request) in requests.enumerated() {
                let close = index == requests.count - 1 ? "Connection: close\r\n" : ""
                connection.send("\(request.0) \(request.1) HTTP/1.1\r\nHost: k\r\n\(close)\r\n")
            }
            let received = try await RawConnection.onThread { connection.receive(for: .seconds(30)) }
            #expect(received.closed)
            let answers = try Self.responses(in: received.data, methods: requests.map(\.0))
            #expect(answers.map(\.status) == requests.map(\.2))
            for (request, answer) in zip(requests, answers) {
                let length = try #require(
                    answer.header("Content-Length").flatMap(Int.init), "\(request.0) \(request.1)")
                #expect(length > 0, "\(request.0) \(request.1)")
                #expect(answer.body.count == (request.0 == "HEAD" ? 0 : length), "\(request.0) \(request.1)")
                if request.3 && request.0 == "GET" {
                    #expect((try? KioskJSON.decode(APIErrorEnvelope.self, from: answer.body)) != nil)
                }
            }
        }
    }

    /// The answers in `data` to requests of these `methods`, in order: an answer to `HEAD` has no body whatever its
    /// `Content-Length`; the rest of `data` after them must be empty.
    static func responses(in data: Data, methods: [String]) throws -> [RawHTTPResponse] {
        var answers: [RawHTTPResponse] = []
        var rest = data[...]
        for method in methods {
            let end = try #require(rest.firstRange(of: Data("\r\n\r\n".utf8)), "no answer to \(method)")
            let head = String(decoding: rest[rest.startIndex..<end.lowerBound], as: UTF8.self)
            var lines = head.components(separatedBy: "\r\n")
            let statusLine = lines.removeFirst()
            #expect(statusLine.hasPrefix("HTTP/1.1 "), "not a status line: \(statusLine.prefix(60))")
            let status = try #require(Int(statusLine.split(separator: " ").dropFirst().first ?? ""))
            let headers: [(String, String)] = lines.compactMap { line in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            let announced = headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) } ?? 0
            let length = method == "HEAD" ? 0 : announced
            guard rest.count >= end.upperBound - rest.startIndex + length else {
                throw RawConnection.Failure(description: "the answer to \(method) is cut short")
            }
            answers.append(
                RawHTTPResponse(
                    status: status, headers: headers, body: Data(rest[end.upperBound..<(end.upperBound + length)])))
            rest = rest[(end.upperBound + length)...]
        }
        #expect(rest.isEmpty, "bytes after the last answer: \(String(decoding: rest.prefix(80), as: UTF8.self))")
        return answers
    }

    /// The answers in `data`, one after another (each with a `Content-Length` or none: a 304 or a HEAD).
    static func responses(in data: Data) throws -> [RawHTTPResponse] {
        var answers: [RawHTTPResponse] = []
        var rest = data[...]
        while let end = rest.firstRange(of: Data("\r\n\r\n".utf8)) {
            let head = String(decoding: rest[rest.startIndex..<end.lowerBound], as: UTF8.self)
            var lines = head.components(separatedBy: "\r\n")
            let status = try #require(Int(lines.removeFirst().split(separator: " ")[1]))
            let headers: [(String, String)] = lines.compactMap { line in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            let length = headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) } ?? 0
            let body = Data(rest[end.upperBound..<(end.upperBound + length)])
            answers.append(RawHTTPResponse(status: status, headers: headers, body: body))
            rest = rest[(end.upperBound + length)...]
        }
        return answers
    }
}
