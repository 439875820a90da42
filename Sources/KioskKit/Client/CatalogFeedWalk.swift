import Foundation
import KioskCore

/// One walk of the catalog's change feed (`GET /v1/products?since=…`), folded page by page into the catalog it
/// leads to (no I/O).
///
/// Each page is applied as it arrives and then let go, so the walk holds the catalog it is building and one page,
/// never the pages before. What it takes is bounded by bytes and by entries (products and removed IDs), all pages
/// together, and by pages: a server whose feed never ends, or ends only after gigabytes of `removed` lists, fails
/// the walk at a bound instead of filling the app's memory. The mirror is replaced only when a walk completes
/// (``CatalogMirror``), so a walk that fails leaves it as it was.
struct CatalogFeedWalk: Sendable {
    /// What one walk may take, all pages together.
    struct Limits: Sendable, Hashable {
        /// Decoded body bytes of every page.
        var maximumBytes: Int
        /// Products (`products`, `added`, `changed`) and `removed` IDs of every page.
        var maximumEntries: Int
        /// Pages (a page may be empty; a walk of empty pages must end too).
        var maximumPages: Int

        /// The bounds of a client whose JSON answers may be `maximumResponseSize` bytes: twice that many bytes (the
        /// whole catalog, which fits one answer, and as much again of removals), a million entries (a catalog
        /// of 16 MiB holds about 40,000 products) and 20,000 pages (the server's pages hold up to 500 entries).
        init(maximumResponseSize: Int) {
            maximumBytes = 2 * maximumResponseSize
            maximumEntries = 1_000_000
            maximumPages = 20_000
        }

        init(maximumBytes: Int, maximumEntries: Int, maximumPages: Int) {
            self.maximumBytes = maximumBytes
            self.maximumEntries = maximumEntries
            self.maximumPages = maximumPages
        }
    }

    let limits: Limits
    /// The catalog so far: the mirror the walk started from (empty for a ``CatalogChanges/Kind/full`` walk) with
    /// every page taken applied.
    private var next: CatalogMirror
    /// The kind and tag of the first page, which every later page must repeat.
    private var lead: (kind: CatalogChanges.Kind, catalogETag: String)?
    /// Pages taken.
    private(set) var pages = 0
    /// Decoded body bytes of the pages taken.
    private(set) var bytes = 0
    /// Entries of the pages taken.
    private(set) var entries = 0

    /// A walk from `base`, the app's copy.
    init(from base: CatalogMirror, limits: Limits) {
        self.limits = limits
        self.next = base
    }

    /// The products the walk holds now: the catalog it is building.
    var heldProducts: Int { next.products.count }

    /// Applies `page`, whose body was `bodyBytes` decoded bytes long. Returns false, taking nothing, for a page that
    /// does not belong to the walk (another kind or catalog tag than the first page's): the pages do not make one
    /// walk, and the app's copy is then fetched whole.
    ///
    /// - Throws: ``KioskError/responseTooLarge(limit:)`` past ``Limits/maximumBytes``;
    ///   ``KioskError/invalidResponse(_:)`` past ``Limits/maximumEntries`` or ``Limits/maximumPages``.
    mutating func take(_ page: CatalogChanges, bodyBytes: Int) throws(KioskError) -> Bool {
        pages += 1
        bytes += bodyBytes
        entries += page.products.count + page.added.count + page.changed.count + page.removed.count
        guard bytes <= limits.maximumBytes else { throw .responseTooLarge(limit: limits.maximumBytes) }
        guard entries <= limits.maximumEntries else {
            throw .invalidResponse("the catalog feed listed over \(limits.maximumEntries) products and removals")
        }
        guard pages <= limits.maximumPages else {
            throw .invalidResponse("the catalog feed did not end after \(limits.maximumPages) pages")
        }
        if let lead {
            guard page.kind == lead.kind, page.catalogETag == lead.catalogETag else { return false }
        } else {
            lead = (page.kind, page.catalogETag)
            next = CatalogMirror(
                catalogETag: page.catalogETag, products: page.kind == .full ? [:] : next.products,
                changedAt: next.changedAt)
        }
        for product in page.products + page.added + page.changed { next.products[product.id] = product }
        for id in page.removed { next.products[id] = nil }
        return true
    }

    /// The catalog the walk leads to, once its last page is taken; nil before the first.
    var result: CatalogMirror? { lead == nil ? nil : next }
}
