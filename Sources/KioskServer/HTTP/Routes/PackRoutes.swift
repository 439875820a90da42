import Foundation
import HTTPTypes
import Hummingbird
import KioskCore
import NIOCore

/// `GET`/`HEAD /v1/packs/<product_id>/<content_version>`: a version's files as one resource (``GrantPack``), so that
/// a client fetches many small files in a few ranged requests instead of one request each. Admitted like content
/// (the grant's token, ``ContentAccess``), with the same preconditions and a single range; the body is sent from
/// the files themselves, piece by piece, with `sendfile(2)` where the connection allows it. Injected faults apply as to
/// content (``FaultInjector``), to the pack's body as a whole, so that resumption can be tested on many-file products
/// too.
struct PackRoutes {
    let access: ContentAccess
    let metrics: ServerMetrics
    let evaluator: RangeRequestEvaluator
    let chunkSize: Int
    /// How long one piece of a body may wait for a client that does not read.
    let sendTimeout: Duration
    /// Injects faults into pack responses; nil unless the operator enabled fault injection.
    let faults: FaultInjector?
    let now: @Sendable () -> Date

    private static let prefix = "/v1/packs/"

    func register(on router: Router<KioskRequestContext>) {
        router.get("/v1/packs/**") { request, context in
            try await self.serve(request, isHead: false, context: context)
        }
        router.head("/v1/packs/**") { request, context in
            try await self.serve(request, isHead: true, context: context)
        }
    }

    /// The product and version of a pack path, or nil when it is not exactly `/v1/packs/<product_id>/<version>`
    /// with valid identifiers (which need no percent-decoding: their alphabet is URL-safe).
    static func parse(rawPath: String) -> (productID: String, version: String)? {
        guard rawPath.hasPrefix(prefix), rawPath.utf8.count <= 512 else { return nil }
        let segments = rawPath.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count == 2 else { return nil }
        let (productID, version) = (String(segments[0]), String(segments[1]))
        guard Identifiers.isValidProductID(productID), Identifiers.isValidContentVersion(version) else { return nil }
        return (productID, version)
    }

    func serve(_ request: Request, isHead: Bool, context: KioskRequestContext) async throws -> Response {
        let requestedFaults = try faults?.requestedSpec(in: request)
        let claims = try access.claims(for: ContentRoutes.token(from: request))
        guard let (productID, version) = Self.parse(rawPath: request.uri.path) else {
            throw APIError.badRequest("The pack path is not valid: /v1/packs/<product_id>/<content_version>.")
        }
        let (product, pack) = try access.pack(productID: productID, version: version, for: claims)
        context.logger.debug(
            "pack request", metadata: ["path": "\(request.uri.path)", "range": "\(request.headers[.range] ?? "none")"])
        // A server-wide corruption hits each file of a purchase once, whether it comes in a pack or on its own:
        // decided by the file the corrupted byte falls in (``corruptsOnce``), not by the pack.
        let responseFaults = faults.flatMap { injector in
            injector.faults(requested: requestedFaults, download: nil).map {
                ResponseFaults(spec: $0, injector: injector, metrics: metrics, logger: context.logger)
            }
        }
        if let status = try await responseFaults?.beforeResponse() { return status }
        let currentTime = now()
        var representation = RepresentationMetadata(
            length: pack.length, entityTag: pack.entityTag, lastModified: pack.lastModified)
        responseFaults?.changeValidators(of: &representation, now: currentTime)
        var headers: HTTPFields = [
            .eTag: representation.entityTag.headerValue,
            .lastModified: HTTPDate.format(representation.lastModified),
            .acceptRanges: "bytes",
            .cacheControl: "private",
        ]
        if let answer = try RequestPreconditions.answer(
            to: request, representation: representation, headers: headers, now: currentTime)
        {
            return answer
        }
        headers[.contentType] = "application/octet-stream"
        let body = PackBody(
            product: product, pack: pack, access: access, chunkSize: chunkSize, sendTimeout: sendTimeout,
            metrics: metrics, channel: context.channel)
        // One range per answer: several (a multipart answer would interleave parts of many files) get the whole
        // pack, which RFC 9110 §14.2 allows.
        let range = responseFaults.map { $0.range(request.headers[.range], isHead: isHead) } ?? request.headers[.range]
        let decision = evaluator.evaluate(
            method: isHead, range: range, ifRange: request.headers[.ifRange], representation: representation,
            now: currentTime)
        let channel = context.channel
        switch decision {
        case .full, .multiple:
            if isHead {
                headers[.contentLength] = String(pack.length)
                return Response(status: .ok, headers: headers)
            }
            let whole = pack.length > 0 ? [ByteRange(first: 0, last: pack.length - 1)] : []
            return Response(
                status: .ok, headers: headers,
                body: body.body(
                    ranges: whole, contentLength: pack.length,
                    faults: responseFaults?.bodyWriter(
                        length: pack.length, channel: channel,
                        mayCorrupt: corruptsOnce(
                            from: 0, requested: requestedFaults, claims: claims, product: product,
                            pack: pack))))
        case .single(let range):
            headers[.contentRange] = ContentRange.satisfied(range, completeLength: pack.length).headerValue
            return Response(
                status: .partialContent, headers: headers,
                body: body.body(
                    ranges: [range], contentLength: range.length,
                    faults: responseFaults?.bodyWriter(
                        length: range.length, channel: channel,
                        mayCorrupt: corruptsOnce(
                            from: range.first, requested: requestedFaults, claims: claims,
                            product: product, pack: pack))))
        case .unsatisfiable:
            throw APIError(
                .rangeNotSatisfiable,
                "The requested range is outside the pack, which is \(pack.length) bytes long.",
                headers: [
                    "Content-Range": ContentRange.unsatisfied(completeLength: pack.length).headerValue,
                    "Accept-Ranges": "bytes",
                ])
        }
    }
}

extension PackRoutes {
    /// For a server-wide corruption (no per-request spec) of a body starting at pack offset `start`: whether the
    /// file the corrupted byte falls in was never corrupted for this purchase (counted as the same download as a
    /// request of that file on its own). A per-request spec corrupts every time.
    func corruptsOnce(
        from start: Int64, requested: FaultSpec?, claims: GrantClaims, product: CatalogProduct, pack: ProductPack
    ) -> ((Int64) -> Bool)? {
        guard requested == nil, let faults else { return nil }
        return { offset in
            guard let piece = pack.pieces(of: ByteRange(first: start + offset, last: start + offset)).first else {
                return false
            }
            let path = GrantService.contentURL(
                product: product.info.productID, version: product.info.contentVersion,
                path: product.files[piece.index].path)
            return faults.isFirstCorruption(
                of: FaultInjector.downloadKey(transactionID: claims.transactionID, path: path))
        }
    }
}

/// The body of a pack answer: each file's piece of the range in turn, each file opened (from the catalog's cache)
/// just before its piece is sent.
struct PackBody {
    let product: CatalogProduct
    let pack: ProductPack
    let access: ContentAccess
    let chunkSize: Int
    let sendTimeout: Duration
    let metrics: ServerMetrics
    let channel: any Channel

    /// A body of `contentLength` bytes: the pack's bytes in `ranges`, through `faults` when given.
    func body(ranges: [ByteRange], contentLength: Int64, faults: FaultyBodyWriter?) -> ResponseBody {
        ResponseBody(contentLength: Int(contentLength)) { writer in
            metrics.activeStreams.increment()
            defer { metrics.activeStreams.decrement() }
            var faults = faults
            for range in ranges {
                for piece in pack.pieces(of: range) {
                    let file = product.files[piece.index]
                    // A file replaced since the catalog hashed it: the answer stops short (the connection closes),
                    // the catalog reloads, and the client asks again.
                    guard let opened = await access.packFile(file, of: product.info.productID) else {
                        throw FileBody.FileShortened()
                    }
                    let fileBody = FileBody(
                        file: opened, chunkSize: chunkSize, sendTimeout: sendTimeout, metrics: metrics,
                        channel: channel)
                    try await fileBody.write([.file(piece.range)], to: &writer, faults: &faults)
                }
            }
            try await writer.finish(nil)
        }
    }
}
