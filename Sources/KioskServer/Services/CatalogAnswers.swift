import Foundation
import Hummingbird
import KioskCore

/// The catalog's answers (API.md, "Catalog"): which encoded representation a request for `/v1/products` (the whole
/// catalog; `?ids=` a selection; `?limit=`/`?cursor=` a page, newest first; `?since=<catalog ETag>` the change feed)
/// or `/v1/products/{id}` asks for, and how it goes out (strong `ETag`, `If-None-Match` → 304, gzip when asked for, a
/// `Cache-Control` that lets a CDN keep it briefly).
///
/// Everything here depends only on the current snapshot, whose answers are encoded once: ``CatalogRoutes`` and
/// the event loops' ``DirectAnswers`` give the same answer to the same request.
struct CatalogAnswers: Sendable {
    let catalog: ContentCatalog

    /// The most IDs one `?ids=` request may ask for.
    static let maximumIDs = 500
    /// The most products (and, in the change feed, removed IDs) in one page, and the page size when `limit` is not
    /// sent.
    static let maximumPageSize = 500

    /// `GET /v1/products` with no query: the whole catalog.
    var all: CatalogRepresentation { catalog.encoded.all }

    /// The representation `/v1/products` answers with these query parameters; an ``APIError`` for parameters that
    /// do not make a valid request.
    func products(query: Parameters) throws -> CatalogRepresentation {
        let since = query.get("since")
        let cursor = try query.get("cursor").map(Self.cursor(_:))
        let limit = try query.get("limit").map(Self.limit(_:))
        if let raw = query.get("ids") {
            guard since == nil, cursor == nil, limit == nil else {
                throw APIError.badRequest("'ids' cannot be combined with 'since', 'cursor' or 'limit'.")
            }
            return try selection(raw)
        }
        if let since {
            let (snapshot, history) = catalog.snapshotAndHistory
            guard since.utf8.count <= 256 else { throw APIError.badRequest("'since' is not a catalog ETag.") }
            if let cursor, cursor.base == nil || (cursor.full != true && cursor.since != CatalogFeed.catalogTag(since))
            {
                throw APIError.badRequest("This cursor belongs to another walk: send the 'since' it was given with.")
            }
            let feed = CatalogFeed(catalog: snapshot.encoded, history: history)
            return feed.answer(
                since: since, cursor: cursor, cursorText: query.get("cursor"), limit: limit ?? Self.maximumPageSize)
        }
        let encoded = catalog.encoded
        guard cursor != nil || limit != nil else { return encoded.all }
        if let cursor, cursor.base != nil {
            throw APIError.badRequest("This cursor belongs to the change feed: send it with its 'since'.")
        }
        return encoded.page(
            after: cursor ?? CatalogCursor(after: nil), cursorText: query.get("cursor"),
            limit: limit ?? Self.maximumPageSize)
    }

    /// The representation of one product: `bad_request` for an ID that cannot be a product's, `not_found` for one
    /// the catalog does not have.
    func product(id: String?) throws -> CatalogRepresentation {
        guard let id, Identifiers.isValidProductID(id) else {
            throw APIError.badRequest("'\((id ?? "").prefix(64))' is not a valid product ID.")
        }
        guard let representation = catalog.encoded.product(id: id) else {
            throw APIError.notFound("There is no product '\(id)'.")
        }
        return representation
    }

    /// 200 with the variant of `representation` the client accepts, or 304 when its `If-None-Match` names it (weak
    /// comparison, RFC 9110 §13.1.2). HEAD gets the headers GET would. `acceptEncoding` and `ifNoneMatch` are the
    /// request's headers (their lines joined with ", ").
    static func answer(
        with representation: CatalogRepresentation, acceptEncoding: String?, ifNoneMatch: String?, isHead: Bool
    ) -> ReadyAnswer {
        let variant = representation.variant(acceptEncoding: acceptEncoding)
        if let ifNoneMatch,
            ifNoneMatch == variant.entityTagHeader
                || EntityTagList(parsing: ifNoneMatch)?.matchesWeakly(variant.entityTag) == true
        {
            return variant.notModified
        }
        return isHead ? variant.headOnly : variant.ok
    }

    /// `?ids=a,b,c`. The answer is kept by the query as sent, so a repeated request (every app asking for the same
    /// IDs) is neither parsed nor checked again: only valid queries are kept.
    private func selection(_ raw: String) throws -> CatalogRepresentation {
        let encoded = catalog.encoded
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
}
