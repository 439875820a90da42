/// The answer of the change feed, `GET /v1/products?since=<catalog ETag>`: one page of what changed in the catalog
/// since the one an app last saw, or of the whole catalog when the server no longer knows that one.
public struct CatalogChanges: Codable, Sendable, Hashable {
    /// What a page holds.
    public enum Kind: String, Codable, Sendable {
        /// Changes since the tag sent: ``added``, ``changed`` and ``removed``.
        case changes
        /// The server does not know the tag sent (too old, from before a restart, or never served): ``products``
        /// holds the whole catalog, in pages; the app replaces its copy with it.
        case full
    }

    /// Whether this page holds changes or the whole catalog.
    public var kind: Kind
    /// The catalog's `ETag` (with its quotes) that the walk brings the app to: send it as `since` next time.
    public var catalogETag: String
    /// Products new since the tag sent.
    public var added: [Product]
    /// Products present then and now, with a change in between.
    public var changed: [Product]
    /// IDs of products removed since the tag sent.
    public var removed: [String]
    /// With ``Kind/full``: the catalog's products, in catalog order.
    public var products: [Product]
    /// The cursor of the next page; nil on the last page.
    public var nextCursor: String?

    /// Creates a page.
    public init(
        kind: Kind, catalogETag: String, added: [Product] = [], changed: [Product] = [], removed: [String] = [],
        products: [Product] = [], nextCursor: String? = nil
    ) {
        self.kind = kind
        self.catalogETag = catalogETag
        self.added = added
        self.changed = changed
        self.removed = removed
        self.products = products
        self.nextCursor = nextCursor
    }

    enum CodingKeys: String, CodingKey {
        case kind, added, changed, removed, products
        case catalogETag = "catalog_etag"
        case nextCursor = "next_cursor"
    }
}
