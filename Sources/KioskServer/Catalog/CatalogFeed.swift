import Foundation
import KioskCore

/// The change feed (`GET /v1/products?since=<catalog ETag>`): the products added and changed since the catalog an
/// app last saw, and the IDs removed, from the in-memory ``CatalogHistory``; or, when that tag is not remembered (too
/// old, from before a restart, or never served), the whole catalog with `"kind": "full"`.
///
/// Answers are pages of at most `limit` entries: products first, in catalog order, then removed IDs in ID order.
/// Every page reports the catalog tag of the walk's first page (`catalog_etag`): an app stores it once the walk is
/// complete and sends it as `since` next time, so whatever changed during the walk is sent again then.
///
/// What changed since a tag is worked out once per snapshot (``CatalogChangeSets``) and each page is a slice of it,
/// so a page costs the entries it sends whatever its `limit` or cursor: a flood of distinct cursors costs no more
/// than plain pages.
struct CatalogFeed {
    let catalog: EncodedCatalog
    let history: CatalogHistory

    /// The answer for a `since` tag (the header form, the bare opaque tag, weak or gzip form alike) or a cursor of a
    /// previous page (`cursorText` as sent, which names the answer in the snapshot's cache). Every unknown tag gets
    /// the same full pages, so unknown tags cannot fill the cache with copies of the catalog.
    func answer(since: String, cursor: CatalogCursor?, cursorText: String?, limit: Int) -> CatalogRepresentation {
        let since = Self.catalogTag(since)
        var position = cursor ?? CatalogCursor(after: nil)
        if cursor == nil {
            position.base = catalog.tag
            if history.tags.contains(since) { position.since = since } else { position.full = true }
        } else if position.full != true, !history.tags.contains(since) {
            // The walk's tag was forgotten between two pages: start again with the whole catalog.
            position = CatalogCursor(after: nil)
            (position.base, position.full) = (catalog.tag, true)
        }
        if position.full == true {
            let key = position.key == nil ? "" : (cursorText ?? "")
            return catalog.answers.representation(for: "F\u{0}\(limit)\u{0}" + key) {
                fullPage(after: position, limit: limit)
            }
        }
        return catalog.answers.representation(for: "c\u{0}\(limit)\u{0}\(since)\u{0}" + (cursorText ?? "")) {
            changesPage(
                catalog.changeSets.changes(since: since, history: history, in: catalog), after: position, limit: limit)
        }
    }

    /// The opaque catalog tag an app names: quotes, `W/` and the gzip form's `-gzip` suffix removed.
    static func catalogTag(_ value: String) -> String {
        var tag = value.trimmingCharacters(in: .whitespaces)
        if tag.hasPrefix("W/") { tag.removeFirst(2) }
        if tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") { tag = String(tag.dropFirst().dropLast()) }
        if tag.hasSuffix("-gzip") { tag.removeLast(5) }
        return tag
    }

    private func fullPage(after position: CatalogCursor, limit: Int) -> Data {
        let start = catalog.firstIndex(after: position.key)
        let end = min(start + limit, catalog.count)
        var next: CatalogCursor?
        if end < catalog.count {
            var cursor = CatalogCursor(after: catalog.key(at: end - 1))
            (cursor.base, cursor.full) = (position.base, true)
            next = cursor
        }
        return Self.assemble(
            kind: "full", base: position.base ?? catalog.tag, added: [], changed: [],
            products: (start..<end).map(catalog.fragment(at:)), removed: [], next: next)
    }

    /// The page after `position` of `changes`: a slice found by binary search, so that its cost is that of the
    /// entries it sends, whatever the walk's `limit` and however far it is.
    private func changesPage(_ changes: CatalogChangeSet, after position: CatalogCursor, limit: Int) -> Data {
        var next: CatalogCursor?
        var added: [Data] = []
        var changed: [Data] = []
        var removed: [String] = []
        if position.removed == nil {
            let start = changes.firstProduct(after: position.key, in: catalog)
            let end = min(start + limit, changes.positions.count)
            for entry in start..<end {
                let fragment = catalog.fragment(at: changes.positions[entry])
                if changes.added[entry] { added.append(fragment) } else { changed.append(fragment) }
            }
            if end < changes.positions.count {
                next = CatalogCursor(after: catalog.key(at: changes.positions[end - 1]))
            }
        }
        let room = limit - added.count - changed.count
        if next == nil {
            let after = position.removed ?? ""
            let start = changes.firstRemoval(after: after)
            let end = min(start + room, changes.removed.count)
            removed = Array(changes.removed[start..<end])
            if end < changes.removed.count {
                next = CatalogCursor(after: nil)
                next?.removed = removed.last ?? after
            }
        }
        if var cursor = next {
            (cursor.since, cursor.base, cursor.full) = (position.since, position.base, false)
            next = cursor
        }
        return Self.assemble(
            kind: "changes", base: position.base ?? catalog.tag, added: added, changed: changed, products: [],
            removed: removed, next: next)
    }

    /// The JSON of a ``CatalogChanges``, keys sorted as ``KioskJSON`` writes them.
    private static func assemble(
        kind: String, base: String, added: [Data], changed: [Data], products: [Data], removed: [String],
        next: CatalogCursor?
    ) -> Data {
        var body = Data("{\"added\":".utf8)
        body.appendJSONArray(added)
        body.appendJSONField("catalog_etag", string: "\"\(base)\"")
        body.append(contentsOf: Array(",\"changed\":".utf8))
        body.appendJSONArray(changed)
        body.appendJSONField("kind", string: kind)
        if let next { body.appendJSONField("next_cursor", string: next.encoded) }
        body.append(contentsOf: Array(",\"products\":".utf8))
        body.appendJSONArray(products)
        body.append(contentsOf: Array(",\"removed\":".utf8))
        // An array of strings always encodes.
        body.append((try? KioskJSON.encode(removed)) ?? Data("[]".utf8))
        body.append(UInt8(ascii: "}"))
        return body
    }
}
