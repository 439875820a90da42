import AsyncHTTPClient
import Foundation
import KioskCore
import KioskServerTestSupport
import NIOCore
import NIOHTTP1
import Testing

@testable import KioskServer

/// `openapi.yaml`, the machine-readable contract, against the server: the routes the router registers and the
/// operations the document describes are the same, its error codes are `APIErrorCode`'s with their statuses, the text
/// compiled into the server is the file's, and `GET /openapi.yaml` answers it. (`scripts/openapi/check.sh` checks the
/// schemas against a live server's answers.)
@Suite("OpenAPI document: the contract and the server agree")
struct OpenAPIDocumentTests {
    /// `openapi.yaml` at the repository's root.
    static let documentURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("openapi.yaml")

    /// The HTTP methods an OpenAPI path item may describe.
    static let methods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    /// The text of `openapi.yaml`.
    static func documentText() throws -> String { try String(contentsOf: documentURL, encoding: .utf8) }

    /// `openapi.yaml`, read.
    static func document() throws -> YAMLValue { try MinimalYAML.parse(try documentText()) }

    /// `METHOD /path` of every operation of the document, paths as written (`{product_id}`).
    static func operations(of document: YAMLValue) throws -> [String] {
        let paths = try #require(document["paths"])
        return paths.keys.flatMap { path in
            paths[path]?.keys.filter(methods.contains).map { "\($0.uppercased()) \(path)" } ?? []
        }
    }

    /// Runs `body` with a sandbox-store server (every route registered) on an empty content folder.
    static func withServer(_ body: (LiveKioskServer) async throws -> Void) async throws {
        let content = try ServerTestDirectory("openapi-content")
        let data = try ServerTestDirectory("openapi-data")
        let live = try await LiveKioskServer.start(
            configuration: .forTests(content: content.url, data: data.url), logger: LogRecorder().logger)
        do {
            try await body(live)
        } catch {
            await live.stop()
            throw error
        }
        await live.stop()
    }

    /// The router's routes (but those `x-kiosk-undocumented-routes` names, which must be routes) and the document's
    /// operations are the same: each route answers an operation, each operation is answered by a route.
    @Test func everyRouteIsDocumentedAndEveryOperationIsARoute() async throws {
        let document = try Self.document()
        let operations = try Self.operations(of: document).map(RouteTemplate.init(document:))
        let undocumented = try #require(document["x-kiosk-undocumented-routes"]?.texts)
        try await Self.withServer { live in
            let registered = live.server.routes
            #expect(Set(registered).count == registered.count)
            let stale = undocumented.filter { !registered.contains($0) }
            #expect(stale.isEmpty, "x-kiosk-undocumented-routes lists routes the server does not register: \(stale)")
            let routes = registered.filter { !undocumented.contains($0) }.map(RouteTemplate.init(server:))
            let notDocumented = routes.filter { route in !operations.contains { route.covers($0) } }
            #expect(
                notDocumented.isEmpty,
                "registered by the server, not in openapi.yaml: \(notDocumented.map(\.description).sorted())")
            let notServed = operations.filter { operation in !routes.contains { $0.covers(operation) } }
            #expect(
                notServed.isEmpty, "in openapi.yaml, not registered by the server: \(notServed.map(\.description))")
        }
    }

    /// `ErrorCode` is exactly `APIErrorCode`; each `Error<status>` schema lists the codes of that status, all of them
    /// between them; and every error response of an operation names the schema of its status (none for `HEAD`, whose
    /// answers have no body).
    @Test func theErrorCodesAreTheServersWithTheirStatuses() throws {
        let document = try Self.document()
        let schemas = try #require(document["components"]?["schemas"])
        let codes = try #require(schemas["ErrorCode"]?["enum"]?.texts)
        let serverCodes = APIErrorCode.allCases.map(\.rawValue)
        #expect(codes.count == Set(codes).count)
        #expect(Set(codes) == Set(serverCodes), "ErrorCode differs from APIErrorCode")

        var partitioned: [String] = []
        for name in schemas.keys where name.hasPrefix("Error") && Int(name.dropFirst(5)) != nil {
            let status = try #require(Int(name.dropFirst(5)))
            let subset = try #require(
                schemas[name]?["allOf"].flatMap(Self.secondItem)?["properties"]?["error"]?["properties"]?["code"]?[
                    "enum"]?.texts, "\(name) lists no codes")
            for code in subset {
                #expect(APIErrorCode(rawValue: code)?.httpStatus == status, "\(code) is not a \(status) code")
            }
            partitioned += subset
        }
        #expect(partitioned.sorted() == serverCodes.sorted(), "the Error<status> schemas do not list every code once")

        let responses = try #require(document["components"]?["responses"])
        let paths = try #require(document["paths"])
        for path in paths.keys {
            for method in paths[path]?.keys.filter(Self.methods.contains) ?? [] {
                let operationResponses = try #require(paths[path]?[method]?["responses"])
                for status in operationResponses.keys {
                    guard let code = Int(status), code >= 400 else { continue }
                    var response = try #require(operationResponses[status])
                    if let reference = response["$ref"]?.text {
                        response = try #require(responses[String(reference.split(separator: "/").last ?? "")])
                    }
                    // An answer to `HEAD` has no body, so no schema.
                    guard method != "head" else {
                        #expect(response["content"] == nil, "head \(path) \(status) describes a body")
                        continue
                    }
                    let schema = response["content"]?["application/json"]?["schema"]?["$ref"]?.text
                    #expect(
                        schema == "#/components/schemas/Error\(status)",
                        "\(method) \(path) \(status): \(schema ?? "none")")
                }
            }
        }
    }

    /// The text the server serves is the file's: `scripts/openapi/embed.sh` was run after the last change.
    @Test func theCompiledDocumentIsTheFile() throws {
        #expect(
            OpenAPIDocument.yaml == (try Self.documentText()),
            "openapi.yaml changed: run scripts/openapi/embed.sh to compile it into the server again")
    }

    /// `GET /openapi.yaml` answers the file's bytes as `application/yaml`; `HEAD` the same headers, no body.
    @Test func theServerAnswersWithTheDocument() async throws {
        let file = Data(try Self.documentText().utf8)
        try await Self.withServer { live in
            for method in [HTTPMethod.GET, .HEAD] {
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(live.port)/openapi.yaml")
                request.method = method
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
                let body = Data(buffer: try await response.body.collect(upTo: 4 << 20))
                #expect(response.status == .ok)
                #expect(response.headers.first(name: "Content-Type") == "application/yaml")
                #expect(response.headers.first(name: "Content-Length") == String(file.count))
                #expect(body == (method == .GET ? file : Data()))
            }
        }
    }

    /// The second schema of an `allOf`: the one that narrows the envelope's code.
    static func secondItem(_ allOf: YAMLValue) -> YAMLValue? {
        guard case .sequence(let items) = allOf, items.count == 2 else { return nil }
        return items[1]
    }
}

/// A route as a method and path segments, from the server (`{id}`, `:id`, `*`, `**`) or from the document
/// (`{product_id}`).
struct RouteTemplate: CustomStringConvertible {
    /// One segment of a path.
    enum Segment: Equatable {
        /// A segment written as it is.
        case literal(String)
        /// One segment of any text: `{name}` or `:name`.
        case parameter
        /// `*`: one segment of any text.
        case wildcard
        /// `**`: one or more final segments.
        case recursiveWildcard
    }

    /// `GET`, `HEAD`, `POST`…
    let method: String
    /// The path's segments.
    let segments: [Segment]
    /// `METHOD /path` as written.
    let description: String

    /// `METHOD /path` as the router lists it.
    init(server route: String) {
        let (method, path) = Self.split(route)
        self.method = method
        self.description = route
        self.segments = path.split(separator: "/").map { segment in
            switch segment {
            case "**": .recursiveWildcard
            case "*": .wildcard
            case _ where segment.hasPrefix(":") || (segment.hasPrefix("{") && segment.hasSuffix("}")): .parameter
            default: .literal(String(segment))
            }
        }
    }

    /// `METHOD /path` of an operation of the document.
    init(document operation: String) {
        let (method, path) = Self.split(operation)
        self.method = method
        self.description = operation
        self.segments = path.split(separator: "/").map { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") ? .parameter : .literal(String(segment))
        }
    }

    /// The method and the path of `METHOD /path`.
    private static func split(_ route: String) -> (String, Substring) {
        let parts = route.split(separator: " ", maxSplits: 1)
        return (String(parts[0]), parts.count > 1 ? parts[1] : "")
    }

    /// Whether this server route answers the document's `operation`: the same method, the same literals, a parameter
    /// or `*` for each parameter, and `**` for one or more final segments of any kind.
    func covers(_ operation: RouteTemplate) -> Bool {
        guard method == operation.method else { return false }
        for (offset, segment) in segments.enumerated() {
            if segment == .recursiveWildcard { return operation.segments.count > offset }
            guard offset < operation.segments.count else { return false }
            switch (segment, operation.segments[offset]) {
            case (.literal(let mine), .literal(let theirs)) where mine == theirs: continue
            case (.parameter, .parameter), (.wildcard, .parameter): continue
            default: return false
            }
        }
        return segments.count == operation.segments.count
    }
}
