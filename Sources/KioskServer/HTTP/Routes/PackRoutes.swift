import Foundation
import Hummingbird
import KioskCore

/// `GET`/`HEAD /v1/packs/<product_id>/<content_version>`: a version's files as one resource (``GrantPack``), so that
/// a client fetches many small files in a few ranged requests instead of one request each. Admitted like content
/// (the grant's token, ``ContentAccess``) and answered by the same ``RangeResponder``, one range at a time; the body
/// is sent from the files themselves, piece by piece, with `sendfile(2)` where the connection allows it. Injected
/// faults apply as to content (``FaultInjector``), to the pack's body as a whole, so that resumption can be tested
/// on many-file products too.
struct PackRoutes {
    /// Admits a request: the token's claims and the pack they open.
    let access: ContentAccess
    /// Answers the preconditions and ranges, and sends the pack's files.
    let responder: RangeResponder
    /// Injects faults into pack responses; nil unless the operator enabled fault injection.
    let faults: FaultInjector?

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
        let prefix = GrantURLs.packPrefix
        guard rawPath.hasPrefix(prefix), rawPath.utf8.count <= 512 else { return nil }
        let segments = rawPath.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count == 2 else { return nil }
        let (productID, version) = (String(segments[0]), String(segments[1]))
        guard Identifiers.isValidProductID(productID), Identifiers.isValidContentVersion(version) else { return nil }
        return (productID, version)
    }

    func serve(_ request: Request, isHead: Bool, context: KioskRequestContext) async throws -> Response {
        let requestedFaults = faults == nil ? nil : try FaultInjector.requestedSpec(in: request)
        let claims = try access.claims(for: request.bearerToken)
        guard let (productID, version) = Self.parse(rawPath: request.uri.path) else {
            throw APIError.badRequest("The pack path is not valid: /v1/packs/<product_id>/<content_version>.")
        }
        let (product, pack) = try access.pack(productID: productID, version: version, for: claims)
        context.logger.debug(
            "pack request", metadata: ["path": "\(request.uri.path)", "range": "\(request.headers[.range] ?? "none")"])
        // A server-wide corruption hits each file of a purchase once, whether it comes in a pack or on its own:
        // decided by the file the corrupted byte falls in (``corruptsOnce``), not by the pack.
        let responseFaults = faults.flatMap { injector in
            ResponseFaults(
                injector: injector, requested: requestedFaults, download: nil, metrics: responder.metrics,
                logger: context.logger)
        }
        if let status = try await responseFaults?.beforeResponse(to: request, channel: context.channel) { return status }
        let representation = RepresentationMetadata(
            length: pack.length, entityTag: pack.entityTag, lastModified: pack.lastModified)
        let resource = RangeResponder.Resource(
            representation: representation, entityTagHeader: representation.entityTag.headerValue,
            lastModifiedHeader: HTTPDate.format(representation.lastModified), contentType: "application/octet-stream",
            noun: "pack", answersMultipleRanges: false,
            mayCorrupt: corruptsOnce(requested: requestedFaults, claims: claims, product: product, pack: pack),
            body: responder.packBody(product: product, pack: pack, access: access, channel: context.channel))
        return try responder.respond(
            to: request, isHead: isHead, resource: resource, faults: responseFaults, channel: context.channel)
    }

    /// For a server-wide corruption (no per-request spec): whether the file the byte at a pack offset falls in was
    /// never corrupted for this purchase (counted as the same download as a request of that file on its own). A
    /// per-request spec corrupts every time (nil).
    func corruptsOnce(
        requested: FaultSpec?, claims: GrantClaims, product: CatalogProduct, pack: ProductPack
    ) -> (@Sendable (Int64) -> Bool)? {
        guard requested == nil, let faults else { return nil }
        return { offset in
            guard let piece = pack.pieces(of: ByteRange(first: offset, last: offset)).first else { return false }
            let path = GrantURLs.content(
                product: product.info.productID, version: product.info.contentVersion,
                path: product.files[piece.index].path)
            return faults.isFirstCorruption(
                of: FaultInjector.downloadKey(transactionID: claims.transactionID, path: path))
        }
    }
}
