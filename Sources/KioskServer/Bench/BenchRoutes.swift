import Foundation
import HTTPTypes
import Hummingbird
import KioskCore
import NIOCore

/// The routes of `kiosk bench`:
///
/// - `GET`/`HEAD /<path>`: a file of the folder, with the faults a `Kiosk-Fault` header or `fault` parameter asks
///   for;
/// - `GET`/`HEAD /s/<scenario>/<path>`: the same file under the scenario's next step for the request's run, each
///   request recorded (``BenchRuns``);
/// - `PUT /s/<scenario>/<path>`: what the client ended with (`{"sha256": "…"}` or `{"error": "…"}`);
/// - `GET /s/`: the scenarios; `GET /s/report`: the verdict on every run (``BenchReport``).
///
/// Files are answered by ``RangeResponder`` as content is: the same preconditions, ranges, validators (`ETag` is
/// the SHA-256) and `Repr-Digest`; under `changed`, those of the file's changed version (``ChangedVersion``), whose
/// SHA-256 the folder computes once per file identity.
struct BenchRoutes: Sendable {
    let folder: BenchFolder
    let scenarios: BenchScenarios
    let runs: BenchRuns
    let responder: RangeResponder

    /// The query parameter naming a run.
    static let runParameter = "run"
    /// The largest body `PUT /s/<scenario>/<path>` takes.
    static let maximumOutcomeSize = 4096
    private static let noSuchFile =
        "No such file. Ask for /<path> or /s/<scenario>/<path> (GET /s/ lists the scenarios)."

    func register(on router: Router<KioskRequestContext>) {
        // "/s" and "/s/**" too: the router prefers them to "/**" for /s and every path under it, whatever the
        // method.
        for path: RouterPath in ["/", "/**", "/s", "/s/**"] {
            router.get(path) { request, context in try await self.answer(request, isHead: false, context: context) }
            router.head(path) { request, context in try await self.answer(request, isHead: true, context: context) }
        }
        router.put("/s/**") { request, context in try await self.takeOutcome(request, context: context) }
    }

    /// The verdict on every run so far.
    func report() async -> BenchReport {
        var entries: [BenchReport.Entry] = []
        // Each file looked up once, however many runs fetched it, and its changed version's digest (cached by the
        // folder) asked for once, for the runs of a scenario where the file changed for good.
        var files: [String: (size: Int64, sha256: String)?] = [:]
        var changed: [String: String?] = [:]
        for (key, sequence) in runs.all {
            let expected = scenarios[key.scenario]?.outcome ?? .bytes
            let needsChanged = expected == .changedOrError && changed[key.file] == nil
            if files[key.file] == nil || needsChanged {
                let opened = try? await folder.file(at: key.file)
                if files[key.file] == nil {
                    files[key.file] = .some(opened.map { (size: $0.representation.length, sha256: $0.file.sha256) })
                }
                if needsChanged {
                    var digest: SHA256Digest?
                    if let opened { digest = try? await folder.changedDigest(of: opened) }
                    changed[key.file] = .some(digest?.hexString)
                }
            }
            entries.append(
                BenchReport.entry(
                    key, sequence, expected: expected, file: files[key.file] ?? nil,
                    changedSHA256: changed[key.file] ?? nil))
        }
        return BenchReport(runs: entries)
    }

    private func answer(_ request: Request, isHead: Bool, context: KioskRequestContext) async throws -> Response {
        guard let path = BenchPath(rawPath: request.uri.path) else { throw APIError.notFound(Self.noSuchFile) }
        switch path {
        case .scenarioList:
            return try JSONIO.response(ScenarioList(scenarios: scenarios.all))
        case .report:
            return try JSONIO.response(await report())
        case .file(let file):
            let requested = try FaultInjector.requestedSpec(in: request)
            let faults = requested.map { (spec: $0, seed: UInt64?.none) }
            return try await serve(file, faults: faults, sendfile: true, request, isHead, context)
        case .scenario(let name, let file):
            guard let scenario = scenarios[name] else {
                throw APIError.notFound("There is no scenario '\(name)' (GET /s/ lists them).")
            }
            let run = runName(of: request, context: context)
            let place = runs.next(run: run, scenario: name, file: file)
            // A URL that expired stays expired, whatever the step: only a renewed one (another query) goes on.
            let query = request.uri.query ?? ""
            var spec = scenario.faults(forRequest: place.number)
            if runs.hasExpired(query, in: place.key) {
                var expired = FaultSpec()
                expired.expire = true
                spec = expired
            } else if spec?.expire == true {
                runs.expire(query, in: place.key)
            }
            context.logger.info(
                "scenario request",
                metadata: [
                    "scenario": "\(name)", "run": "\(run)", "request": "\(place.number)",
                    "faults": "\(spec?.description ?? "none")", "range": "\(request.headers[.range] ?? "none")",
                ])
            let record = BenchRequestRecord(
                number: place.number, method: request.method.rawValue, range: request.headers[.range],
                ifRange: request.headers[.ifRange], ifMatch: request.headers[.ifMatch],
                faults: spec?.description ?? "none", status: 0, bytesSent: 0, errorPage: spec?.errorPage ?? false)
            do {
                // Through the body writer, not sendfile, so that every byte sent is counted.
                let response = try await serve(
                    file, faults: spec.map { (spec: $0, seed: place.seed) }, sendfile: false, request, isHead, context)
                return recording(response, record, key: place.key)
            } catch let error as APIError {
                var refused = record
                refused.status = error.code.httpStatus
                runs.record(refused, for: place.key)
                throw error
            }
        }
    }

    private func serve(
        _ path: String, faults: (spec: FaultSpec, seed: UInt64?)?, sendfile: Bool, _ request: Request,
        _ isHead: Bool, _ context: KioskRequestContext
    ) async throws -> Response {
        guard let file = try await folder.file(at: path) else { throw APIError.notFound(Self.noSuchFile) }
        var resource = RangeResponder.Resource(
            representation: file.representation, entityTagHeader: file.entityTagHeader,
            lastModifiedHeader: file.lastModifiedHeader, extraHeaders: file.extraHeaders,
            contentType: file.contentType, noun: "file", answersMultipleRanges: true,
            body: responder.fileBody(file, channel: sendfile ? context.channel : nil))
        let responseFaults = faults.flatMap { faults in
            ResponseFaults(
                injector: FaultInjector(profile: .requestOnly, seed: faults.seed), requested: faults.spec,
                download: nil, metrics: responder.metrics, logger: context.logger)
        }
        if let status = try await responseFaults?.beforeResponse(to: request, channel: context.channel) {
            return status
        }
        if responseFaults?.spec.changed == true {
            resource.changedDigest = try await folder.changedDigest(of: file)
        }
        return try responder.respond(
            to: request, isHead: isHead, resource: resource, faults: responseFaults, channel: context.channel)
    }

    /// `response`, whose body counts the bytes it sends and records `record` (with its status and those bytes) once
    /// it is out, or cut.
    private func recording(_ response: Response, _ record: BenchRequestRecord, key: BenchSequence.Key) -> Response {
        var response = response
        var answered = record
        answered.status = Int(response.status.code)
        let runs = self.runs
        let body = response.body
        let fixed = answered
        response.body = ResponseBody(contentLength: body.contentLength) { writer in
            let counter = ByteCounter()
            defer {
                var sent = fixed
                sent.bytesSent = counter.count
                runs.record(sent, for: key)
            }
            try await body.write(CountingBodyWriter(base: writer, counter: counter))
        }
        return response
    }

    /// `PUT /s/<scenario>/<path>`: what the client ended with, for the report.
    private func takeOutcome(_ request: Request, context: KioskRequestContext) async throws -> Response {
        guard case .scenario(let name, let file) = BenchPath(rawPath: request.uri.path), scenarios[name] != nil else {
            throw APIError.notFound(
                "PUT /s/<scenario>/<path> takes what a client ended with, for a scenario of GET /s/.")
        }
        let body = try await request.body.collect(upTo: Self.maximumOutcomeSize)
        let said: ClientSaid
        do {
            said = try JSONDecoder().decode(ClientSaid.self, from: Data(buffer: body))
        } catch {
            throw APIError.badRequest(#"The body must be {"sha256": "<64 hex digits>"} or {"error": "<message>"}."#)
        }
        let outcome: BenchClientOutcome
        switch (said.sha256?.lowercased(), said.error) {
        case (let sha256?, nil) where sha256.utf8.count == 64 && sha256.allSatisfy(\.isHexDigit):
            outcome = .saved(sha256: sha256)
        case (nil, let message?):
            outcome = .failed(message: String(message.prefix(512)))
        default:
            throw APIError.badRequest(#"The body must be {"sha256": "<64 hex digits>"} or {"error": "<message>"}."#)
        }
        let key = BenchSequence.Key(run: runName(of: request, context: context), scenario: name, file: file)
        runs.record(outcome, for: key)
        return Response(status: .noContent)
    }

    private struct ClientSaid: Decodable {
        var sha256: String?
        var error: String?
    }

    /// The request's run: `?run=NAME`, or the client's address and `User-Agent`.
    private func runName(of request: Request, context: KioskRequestContext) -> String {
        if let named = request.uri.queryParameters.get(Self.runParameter), !named.isEmpty {
            return String(named.prefix(128))
        }
        let address = context.channel.remoteAddress?.ipAddress ?? "unknown"
        return "\(address) \(request.headers[.userAgent]?.prefix(128) ?? "")"
    }

    /// `GET /s/`'s answer.
    private struct ScenarioList: Encodable {
        struct Entry: Encodable {
            var name: String
            var description: String
            var steps: [String]
            var then: String
            var outcome: String
        }

        var scenarios: [Entry]

        init(scenarios: [BenchScenario]) {
            self.scenarios = scenarios.map { scenario in
                Entry(
                    name: scenario.name, description: scenario.description,
                    steps: scenario.steps.map { $0.kinds.isEmpty ? "none" : $0.description },
                    then: scenario.afterSteps.rawValue, outcome: scenario.outcome.rawValue)
            }
        }
    }
}

/// The body bytes a response wrote so far (one response's writer, one task).
private final class ByteCounter {
    var count: Int64 = 0
}

/// Passes a response body on, counting its bytes.
private struct CountingBodyWriter: ResponseBodyWriter {
    var base: any ResponseBodyWriter
    let counter: ByteCounter

    mutating func write(_ buffer: ByteBuffer) async throws {
        try await base.write(buffer)
        counter.count += Int64(buffer.readableBytes)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await base.finish(trailingHeaders)
    }
}
