import Foundation
import HTTPTypes
import Hummingbird
import KioskCore
import NIOCore

/// The routes of `kiosk bench`: `GET`/`HEAD /<path>` (a file of the folder, with the faults a `Kiosk-Fault`
/// header or `fault` parameter asks for), `GET`/`HEAD /s/<scenario>/<path>` (the same file under the scenario's
/// next step for the run) and `GET /s/` (the scenarios). Files are answered by ``RangeResponder`` as content is:
/// the same preconditions, ranges, validators (`ETag` is the SHA-256) and `Repr-Digest`.
struct BenchRoutes {
    let folder: BenchFolder
    let scenarios: BenchScenarios
    let runs: BenchRuns
    let responder: RangeResponder

    /// The query parameter naming a run.
    static let runParameter = "run"

    func register(on router: Router<KioskRequestContext>) {
        for path: RouterPath in ["/", "/**"] {
            router.get(path) { request, context in try await self.answer(request, isHead: false, context: context) }
            router.head(path) { request, context in try await self.answer(request, isHead: true, context: context) }
        }
    }

    private func answer(_ request: Request, isHead: Bool, context: KioskRequestContext) async throws -> Response {
        guard let path = BenchPath(rawPath: request.uri.path) else {
            throw APIError.notFound(
                "No such file. Ask for /<path> or /s/<scenario>/<path> (GET /s/ lists the scenarios).")
        }
        switch path {
        case .scenarioList:
            return try JSONIO.response(ScenarioList(scenarios: scenarios.all))
        case .file(let file):
            let requested = try FaultInjector.requestedSpec(in: request)
            return try await serve(file, faults: requested.map { (spec: $0, seed: nil) }, request, isHead, context)
        case .scenario(let name, let file):
            guard let scenario = scenarios[name] else {
                throw APIError.notFound("There is no scenario '\(name)' (GET /s/ lists them).")
            }
            let run = runName(of: request, context: context)
            let place = runs.next(run: run, scenario: name, file: file)
            let spec = scenario.faults(forRequest: place.number)
            context.logger.info(
                "scenario request",
                metadata: [
                    "scenario": "\(name)", "run": "\(run)", "request": "\(place.number)",
                    "faults": "\(spec?.description ?? "none")", "range": "\(request.headers[.range] ?? "none")",
                ])
            return try await serve(file, faults: spec.map { (spec: $0, seed: place.seed) }, request, isHead, context)
        }
    }

    private func serve(
        _ path: String, faults: (spec: FaultSpec, seed: UInt64?)?, _ request: Request, _ isHead: Bool,
        _ context: KioskRequestContext
    ) async throws -> Response {
        guard let file = try await folder.file(at: path) else {
            throw APIError.notFound(
                "No such file. Ask for /<path> or /s/<scenario>/<path> (GET /s/ lists the scenarios).")
        }
        let resource = RangeResponder.Resource(
            representation: file.representation, entityTagHeader: file.entityTagHeader,
            lastModifiedHeader: file.lastModifiedHeader, extraHeaders: file.extraHeaders,
            contentType: file.contentType, noun: "file", answersMultipleRanges: true,
            body: responder.fileBody(file, channel: context.channel))
        let responseFaults = faults.flatMap { faults in
            ResponseFaults(
                injector: FaultInjector(profile: .requestOnly, seed: faults.seed), requested: faults.spec,
                download: nil, metrics: responder.metrics, logger: context.logger)
        }
        if let status = try await responseFaults?.beforeResponse(channel: context.channel) { return status }
        return try responder.respond(
            to: request, isHead: isHead, resource: resource, faults: responseFaults, channel: context.channel)
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
