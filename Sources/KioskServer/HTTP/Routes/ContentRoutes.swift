import Foundation
import HTTPTypes
import Hummingbird
import KioskCore
import NIOCore

/// `GET`/`HEAD /v1/content/<product_id>/<content_version>/<path>`: the grant-gated file server. The request is
/// decoded here and admitted by ``ContentAccess``; the answer follows RFC 9110's preconditions and range semantics
/// (``RequestPreconditions``, ``RangeRequestEvaluator``), with the injected faults of ``FaultInjector`` when the
/// operator enabled them.
struct ContentRoutes {
    /// Admits a request: the token's claims and the file they open.
    let access: ContentAccess
    let metrics: ServerMetrics
    let evaluator: RangeRequestEvaluator
    let chunkSize: Int
    /// How long one piece of a body may wait for a client that does not read.
    let sendTimeout: Duration
    /// Injects faults into content responses; nil unless the operator enabled fault injection.
    let faults: FaultInjector?
    let now: @Sendable () -> Date

    private static let prefix = "/v1/content/"
    private static let reprDigest = HTTPField.Name("Repr-Digest")!

    func register(on router: Router<KioskRequestContext>) {
        router.get("/v1/content/**") { request, context in
            try await self.serve(request, isHead: false, context: context)
        }
        router.head("/v1/content/**") { request, context in
            try await self.serve(request, isHead: true, context: context)
        }
    }

    /// Splits and percent-decodes a raw content request path (``ContentPath/init(rawPath:under:)``).
    static func parse(rawPath: String) -> ContentPath? { ContentPath(rawPath: rawPath, under: prefix) }

    /// The bearer token: `Authorization: Bearer <token>`, or `?token=` for clients that cannot set headers.
    static func token(from request: Request) -> String? {
        if let authorization = request.headers[.authorization] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return request.uri.queryParameters.get("token")
    }

    func serve(_ request: Request, isHead: Bool, context: KioskRequestContext) async throws -> Response {
        let requestedFaults = try faults?.requestedSpec(in: request)
        let claims = try access.claims(for: Self.token(from: request))
        guard let path = Self.parse(rawPath: request.uri.path) else {
            throw APIError.badRequest("The content path is not valid.")
        }
        let file = try await access.file(at: path, for: claims)
        // One line per content request at `debug` (the path and range only: never the token): an access log for
        // an operator tracing one client, and how the tests count the requests per file.
        context.logger.debug(
            "content request",
            metadata: ["path": "\(request.uri.path)", "range": "\(request.headers[.range] ?? "none")"])
        let responseFaults = faults.flatMap { injector in
            injector.faults(
                requested: requestedFaults,
                download: FaultInjector.downloadKey(transactionID: claims.transactionID, path: request.uri.path)
            ).map { ResponseFaults(spec: $0, injector: injector, metrics: metrics, logger: context.logger) }
        }
        if let status = try await responseFaults?.beforeResponse() { return status }
        return try respond(to: request, file: file, isHead: isHead, channel: context.channel, faults: responseFaults)
    }

    private func respond(
        to request: Request, file opened: OpenContentFile, isHead: Bool, channel: any Channel,
        faults: ResponseFaults?
    ) throws -> Response {
        let file = opened.file
        let currentTime = now()
        var representation = opened.representation
        var headers: HTTPFields = [
            .eTag: opened.entityTagHeader,
            .lastModified: opened.lastModifiedHeader,
            .acceptRanges: "bytes",
            .cacheControl: "private",
            Self.reprDigest: opened.representationDigest,
        ]
        if let faults {
            faults.changeValidators(of: &representation, now: currentTime)
            headers[.eTag] = representation.entityTag.headerValue
            headers[.lastModified] = HTTPDate.format(representation.lastModified)
        }
        // RFC 9110 §13.2.2: the preconditions, against the validators sent, before Range and If-Range.
        if let answer = try RequestPreconditions.answer(
            to: request, representation: representation, headers: headers, now: currentTime)
        {
            return answer
        }
        let contentType = opened.contentType
        let range = faults.map { $0.range(request.headers[.range], isHead: isHead) } ?? request.headers[.range]
        let decision = evaluator.evaluate(
            method: isHead, range: range, ifRange: request.headers[.ifRange], representation: representation,
            now: currentTime)
        let fileBody = FileBody(
            file: opened, chunkSize: chunkSize, sendTimeout: sendTimeout, metrics: metrics, channel: channel)
        switch decision {
        case .full:
            headers[.contentType] = contentType
            if isHead {
                headers[.contentLength] = String(file.length)
                return Response(status: .ok, headers: headers)
            }
            let segments: [FileBody.Segment] =
                file.length > 0 ? [.file(ByteRange(first: 0, last: file.length - 1))] : []
            return Response(
                status: .ok, headers: headers,
                body: fileBody.body(
                    segments: segments, contentLength: file.length,
                    faults: faults?.bodyWriter(length: file.length, channel: channel)))
        case .single(let range):
            headers[.contentType] = contentType
            headers[.contentRange] = ContentRange.satisfied(range, completeLength: file.length).headerValue
            return Response(
                status: .partialContent, headers: headers,
                body: fileBody.body(
                    segments: [.file(range)], contentLength: range.length,
                    faults: faults?.bodyWriter(length: range.length, channel: channel)))
        case .multiple(let ranges):
            guard
                let plan = MultipartByteRangesPlan(
                    ranges: ranges, completeLength: file.length, partContentType: contentType,
                    boundary: MultipartByteRangesPlan.randomBoundary())
            else { throw APIError(.internalError, "The multipart answer could not be planned.") }
            headers[.contentType] = plan.contentType
            return Response(
                status: .partialContent, headers: headers,
                body: fileBody.body(
                    segments: plan.segments, contentLength: plan.contentLength,
                    faults: faults?.bodyWriter(length: plan.contentLength, channel: channel)))
        case .unsatisfiable:
            throw APIError(
                .rangeNotSatisfiable,
                "The requested range is outside the file, which is \(file.length) bytes long.",
                headers: [
                    "Content-Range": ContentRange.unsatisfied(completeLength: file.length).headerValue,
                    "Accept-Ranges": "bytes",
                ])
        }
    }
}

extension ContentPath {
    /// The product, version and file of a raw request path `<prefix><product_id>/<content_version>/<path>`, split and
    /// percent-decoded: the rule of every route that names a file of a version (content, subchunks). Any traversal
    /// (`..`, `.`, empty segments, an encoded `/` or NUL) or an identifier outside the safe alphabet is refused.
    init?(rawPath: String, under prefix: String) {
        guard rawPath.hasPrefix(prefix), rawPath.utf8.count <= 2048 else { return nil }
        let rawSegments = rawPath.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard rawSegments.count >= 3 else { return nil }
        var segments: [String] = []
        for raw in rawSegments {
            guard
                let decoded = raw.utf8.contains(UInt8(ascii: "%")) ? String(raw).removingPercentEncoding : String(raw),
                !decoded.isEmpty, !decoded.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == 0 })
            else { return nil }
            segments.append(decoded)
        }
        let filePath = segments[2...].joined(separator: "/")
        guard Identifiers.isValidProductID(segments[0]), Identifiers.isValidContentVersion(segments[1]),
            Identifiers.isValidFilePath(filePath)
        else { return nil }
        self.init(productID: segments[0], version: segments[1], filePath: filePath)
    }
}

/// Content types for the files Kiosk typically serves.
enum MediaTypes {
    static func forPath(_ path: String) -> String {
        let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
        return switch ext {
        case "pdf": "application/pdf"
        case "epub": "application/epub+zip"
        case "json": "application/json"
        case "txt", "md": "text/plain; charset=utf-8"
        case "html", "htm": "text/html; charset=utf-8"
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "zip": "application/zip"
        default: "application/octet-stream"
        }
    }
}
