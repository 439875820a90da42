import Foundation
import Hummingbird
import KioskCore

/// `GET`/`HEAD /v1/products` (the catalog; `?ids=` a selection; `?limit=`/`?cursor=` a page, newest first;
/// `?since=<catalog ETag>` the change feed) and `GET`/`HEAD /v1/products/{id}` (one
/// product): answers encoded once per catalog snapshot, each with a strong `ETag`, `If-None-Match` → 304, gzip when
/// asked for, and a `Cache-Control` that lets a CDN keep them briefly.
struct CatalogRoutes {
    let catalog: ContentCatalog

    /// The catalog is public and changes at most once per reload: caches may keep an answer for 10 s (the default
    /// reload interval), then serve it for up to a minute more while they revalidate it with its `ETag`.
    static let cacheControl = "public, max-age=10, stale-while-revalidate=60"
    /// The most IDs one `?ids=` request may ask for.
    static let maximumIDs = 500

    func register(on router: Router<KioskRequestContext>) {
        router.get("/v1/products") { request, _ in try self.products(request, isHead: false) }
        router.head("/v1/products") { request, _ in try self.products(request, isHead: true) }
        router.get("/v1/products/{id}") { request, context in
            try self.product(request, id: context.parameters.get("id"), isHead: false)
        }
        router.head("/v1/products/{id}") { request, context in
            try self.product(request, id: context.parameters.get("id"), isHead: true)
        }
    }

    func products(_ request: Request, isHead: Bool) throws -> Response {
        let query = request.uri.queryParameters
        let since = query.get("since")
        let cursor = try query.get("cursor").map(Self.cursor(_:))
        let limit = try query.get("limit").map(Self.limit(_:))
        if let raw = query.get("ids") {
            guard since == nil, cursor == nil, limit == nil else {
                throw APIError.badRequest("'ids' cannot be combined with 'since', 'cursor' or 'limit'.")
            }
            return try Self.respond(with: selection(raw), to: request, isHead: isHead)
        }
        if let since {
            let (snapshot, history) = catalog.snapshotAndHistory
            guard since.utf8.count <= 256 else { throw APIError.badRequest("'since' is not a catalog ETag.") }
            if let cursor, cursor.base == nil || (cursor.full != true && cursor.since != CatalogFeed.catalogTag(since))
            {
                throw APIError.badRequest("This cursor belongs to another walk: send the 'since' it was given with.")
            }
            let feed = CatalogFeed(catalog: snapshot.encoded, history: history)
            return Self.respond(
                with: feed.answer(
                    since: since, cursor: cursor, cursorText: query.get("cursor"),
                    limit: limit ?? Self.maximumPageSize), to: request,
                isHead: isHead)
        }
        let encoded = catalog.snapshot.encoded
        guard cursor != nil || limit != nil else {
            return Self.respond(with: encoded.all, to: request, isHead: isHead)
        }
        if let cursor, cursor.base != nil {
            throw APIError.badRequest("This cursor belongs to the change feed: send it with its 'since'.")
        }
        return Self.respond(
            with: encoded.page(
                after: cursor ?? CatalogCursor(after: nil), cursorText: query.get("cursor"),
                limit: limit ?? Self.maximumPageSize),
            to: request, isHead: isHead)
    }

    /// The most products (and, in the change feed, removed IDs) in one page, and the page size when `limit` is not
    /// sent.
    static let maximumPageSize = 500

    /// `?ids=a,b,c`. The answer is kept by the query as sent, so a repeated request (every app asking for the same
    /// IDs) is neither parsed nor checked again: only valid queries are kept.
    private func selection(_ raw: String) throws -> CatalogRepresentation {
        let encoded = catalog.snapshot.encoded
        return try encoded.answers.representation(for: "q\u{0}" + raw) {
            let ids = raw.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard ids.count <= Self.maximumIDs else {
                throw APIError.badRequest("Ask for at most \(Self.maximumIDs) product IDs at once.")
            }
            if let bad = ids.first(where: { !Identifiers.isValidProductID($0) }) {
                throw APIError.badRequest("'\(bad.prefix(64))' is not a valid product ID.")
            }
            return encoded.selectionJSON(ids: ids)
        }
    }

    private static func limit(_ raw: String) throws -> Int {
        guard let limit = Int(raw), (1...maximumPageSize).contains(limit) else {
            throw APIError.badRequest("'limit' must be a whole number from 1 to \(maximumPageSize).")
        }
        return limit
    }

    private static func cursor(_ raw: String) throws -> CatalogCursor {
        guard let cursor = CatalogCursor(encoded: raw) else {
            throw APIError.badRequest("'cursor' is not a cursor this server gave: start the walk again without it.")
        }
        return cursor
    }

    func product(_ request: Request, id: String?, isHead: Bool) throws -> Response {
        guard let id, Identifiers.isValidProductID(id) else {
            throw APIError.badRequest("'\((id ?? "").prefix(64))' is not a valid product ID.")
        }
        guard let representation = catalog.snapshot.encoded.product(id: id) else {
            throw APIError.notFound("There is no product '\(id)'.")
        }
        return Self.respond(with: representation, to: request, isHead: isHead)
    }

    /// 200 with the representation the client accepts, or 304 when its `If-None-Match` names it (weak comparison,
    /// RFC 9110 §13.1.2). HEAD gets the headers GET would.
    static func respond(with representation: CatalogRepresentation, to request: Request, isHead: Bool) -> Response {
        let variant = representation.variant(acceptEncoding: request.headers[.acceptEncoding])
        var headers: HTTPFields = [
            .eTag: variant.entityTag.headerValue, .cacheControl: cacheControl, .vary: "Accept-Encoding",
        ]
        if let ifNoneMatch = request.headers[.ifNoneMatch], let list = EntityTagList(parsing: ifNoneMatch),
            list.matchesWeakly(variant.entityTag)
        {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = "application/json; charset=utf-8"
        if variant.isGzip { headers[.contentEncoding] = "gzip" }
        if isHead {
            headers[.contentLength] = String(variant.body.readableBytes)
            return Response(status: .ok, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: variant.body))
    }
}
