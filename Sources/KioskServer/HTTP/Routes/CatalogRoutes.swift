import CompressNIO
import Crypto
import Foundation
import Hummingbird
import KioskCore

/// `GET /v1/products`: the catalog, with a strong ETag, `If-None-Match` → 304 and gzip when asked for.
struct CatalogRoutes {
    let catalog: ContentCatalog

    func register(on router: Router<KioskRequestContext>) {
        router.get("/v1/products") { request, _ in try self.products(request) }
    }

    func products(_ request: Request) throws -> Response {
        var ids: [String]?
        if let raw = request.uri.queryParameters.get("ids") {
            let list = raw.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard list.count <= 500 else { throw APIError.badRequest("Ask for at most 500 product IDs at once.") }
            if let bad = list.first(where: { !Identifiers.isValidProductID($0) }) {
                throw APIError.badRequest("'\(bad.prefix(64))' is not a valid product ID.")
            }
            ids = list
        }
        return try render(catalog.snapshot.catalog(ids: ids), request: request)
    }

    private func render(_ answer: CatalogResponse, request: Request) throws -> Response {
        let body = try KioskJSON.encode(answer)
        let digest = SHA256.hash(data: body).prefix(16).hexString
        let gzip = Self.acceptsGzip(request.headers[.acceptEncoding]) && body.count > 512
        // Each representation has its own strong tag: the gzip one is another sequence of bytes.
        let tag = EntityTag(opaqueTag: gzip ? digest + "-gzip" : digest)!  // hex and '-' make a valid opaque tag
        var headers: HTTPFields = [
            .eTag: tag.headerValue, .cacheControl: "no-cache", .vary: "Accept-Encoding",
        ]
        if let ifNoneMatch = request.headers[.ifNoneMatch], let list = EntityTagList(parsing: ifNoneMatch),
            list.matchesWeakly(tag)
        {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = "application/json; charset=utf-8"
        var buffer = ByteBuffer(bytes: body)
        if gzip {
            headers[.contentEncoding] = "gzip"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: try buffer.compress(with: .gzip())))
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: buffer))
    }

    /// Whether an `Accept-Encoding` value accepts gzip (RFC 9110 §12.5.3): the quality of an explicit `gzip` or
    /// `x-gzip` entry if there is one, otherwise that of `*`, must be above zero.
    static func acceptsGzip(_ value: String?) -> Bool {
        guard let value else { return false }
        var explicit: Double?
        var wildcard: Double?
        for item in value.lowercased().split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let coding = parts.first else { continue }
            let quality =
                parts.dropFirst().first { $0.hasPrefix("q=") }.map { Double($0.dropFirst(2)) ?? 0 } ?? 1
            switch coding {
            case "gzip", "x-gzip": explicit = max(explicit ?? 0, quality)
            case "*": wildcard = quality
            default: continue
            }
        }
        return (explicit ?? wildcard ?? 0) > 0
    }
}
