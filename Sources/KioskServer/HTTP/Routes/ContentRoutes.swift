import Foundation
import HTTPTypes
import Hummingbird
import KioskCore
import NIOCore

/// `GET`/`HEAD /v1/content/<product_id>/<content_version>/<path>`: the grant-gated file server. The request is
/// decoded here and admitted by ``ContentAccess``; ``RangeResponder`` answers it with RFC 9110's preconditions and
/// range semantics, with the injected faults of ``FaultInjector`` when the operator enabled them, unless
/// ``NginxOffload`` hands the file to nginx.
struct ContentRoutes {
    /// Admits a request: the token's claims and the file they open.
    let access: ContentAccess
    /// Answers the preconditions and ranges, and sends the file.
    let responder: RangeResponder
    /// Injects faults into content responses; nil unless the operator enabled fault injection.
    let faults: FaultInjector?
    /// Hands admitted files to nginx (`--offload nginx:PREFIX`); nil when Kiosk sends every file itself.
    let offload: NginxOffload?
    /// The SHA-256 of the changed version of each file answered under the fault `changed`, computed once per file
    /// identity (empty unless such a fault is asked for).
    let changedDigests = ChangedDigests()

    func register(on router: Router<KioskRequestContext>) {
        router.get("/v1/content/**") { request, context in
            try await self.serve(request, isHead: false, context: context)
        }
        router.head("/v1/content/**") { request, context in
            try await self.serve(request, isHead: true, context: context)
        }
    }

    /// Splits and percent-decodes a raw content request path (``ContentPath/init(rawPath:under:)``).
    static func parse(rawPath: String) -> ContentPath? { ContentPath(rawPath: rawPath, under: GrantURLs.contentPrefix) }

    func serve(_ request: Request, isHead: Bool, context: KioskRequestContext) async throws -> Response {
        let requestedFaults = faults == nil ? nil : try FaultInjector.requestedSpec(in: request)
        let claims = try access.claims(for: request.bearerToken)
        guard let path = Self.parse(rawPath: request.uri.path) else {
            throw APIError.badRequest("The content path is not valid.")
        }
        let file = try await access.file(at: path, for: claims)
        // One line per content request at `debug` (the path and range only: never the token): an access log for
        // an operator tracing one client, and how the tests count the requests per file.
        context.logger.debug(
            "content request",
            metadata: ["path": "\(request.uri.path)", "range": "\(request.headers[.range] ?? "none")"])
        var resource = RangeResponder.Resource(
            representation: file.representation, entityTagHeader: file.entityTagHeader,
            lastModifiedHeader: file.lastModifiedHeader, extraHeaders: file.extraHeaders,
            contentType: file.contentType, noun: "file", answersMultipleRanges: true,
            body: responder.fileBody(file, channel: context.channel))
        if let offload {
            try offload.refuseFaults(in: request)
            if let redirect = offload.redirect(request, isHead: isHead, resource: resource, path: path) {
                return redirect
            }
        }
        let responseFaults = faults.flatMap { injector in
            ResponseFaults(
                injector: injector, requested: requestedFaults,
                download: FaultInjector.downloadKey(transactionID: claims.transactionID, path: request.uri.path),
                metrics: responder.metrics, logger: context.logger)
        }
        if let status = try await responseFaults?.beforeResponse(to: request, channel: context.channel) {
            return status
        }
        if responseFaults?.spec.changed == true { resource.changedDigest = try await changedDigests.digest(of: file) }
        return try responder.respond(
            to: request, isHead: isHead, resource: resource, faults: responseFaults, channel: context.channel)
    }
}
