import CompressNIO
import Crypto
import Foundation
import Hummingbird
import KioskCore

/// `GET /v1/products`: the catalog, with a strong ETag, `If-None-Match` → 304 and gzip when asked for.
struct CatalogRoutes {
    let catalog: ContentCatalog

    func register(on router: Router<BasicRequestContext>) {
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
        let tag = EntityTag(opaqueTag: SHA256.hash(data: body).prefix(16).hexString)!  // hex is a valid opaque tag
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
        if Self.acceptsGzip(request.headers[.acceptEncoding]), body.count > 512,
            let compressed = try? buffer.compress(with: .gzip())
        {
            headers[.contentEncoding] = "gzip"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: compressed))
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: buffer))
    }

    /// Whether an `Accept-Encoding` value accepts gzip: `gzip`, `x-gzip` or `*` with a non-zero quality.
    static func acceptsGzip(_ value: String?) -> Bool {
        guard let value else { return false }
        for item in value.lowercased().split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let coding = parts.first, coding == "gzip" || coding == "x-gzip" || coding == "*" else { continue }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return quality > 0
        }
        return false
    }
}
