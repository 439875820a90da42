import Foundation

/// One product on sale, as `GET /v1/products` lists it.
public struct Product: Codable, Sendable, Hashable, Identifiable {
    /// The store's product identifier, e.g. `com.example.kiosk.magazine.2026-11`.
    public var id: String
    /// The kind of purchase.
    public var type: ProductType
    /// A short title for a list row.
    public var title: String
    /// A longer description, if the publisher wrote one.
    public var description: String?
    /// The version of the content currently served (an opaque string such as `1.0`).
    public var contentVersion: String
    /// The total size of the product's files in bytes.
    public var contentLength: Int64
    /// How many files the product delivers (0 for products without content).
    public var fileCount: Int
    /// When the product was published, if known.
    public var publishedAt: Date?

    /// Creates a catalog entry.
    public init(
        id: String, type: ProductType, title: String, description: String? = nil, contentVersion: String,
        contentLength: Int64, fileCount: Int, publishedAt: Date? = nil
    ) {
        self.id = id
        self.type = type
        self.title = title
        self.description = description
        self.contentVersion = contentVersion
        self.contentLength = contentLength
        self.fileCount = fileCount
        self.publishedAt = publishedAt
    }

    enum CodingKeys: String, CodingKey {
        case id, type, title, description
        case contentVersion = "content_version"
        case contentLength = "content_length"
        case fileCount = "file_count"
        case publishedAt = "published_at"
    }
}

/// The answer to `GET /v1/products`.
public struct CatalogResponse: Codable, Sendable, Hashable {
    /// The products found.
    public var products: [Product]
    /// Requested identifiers the server does not know (empty when no `ids` filter was sent).
    public var invalidProductIDs: [String]
    /// A paged answer (`limit` or `cursor` sent): the cursor of the next page; nil on the last page and without
    /// paging.
    public var nextCursor: String?

    /// Creates a catalog answer.
    public init(products: [Product], invalidProductIDs: [String] = [], nextCursor: String? = nil) {
        self.products = products
        self.invalidProductIDs = invalidProductIDs
        self.nextCursor = nextCursor
    }

    enum CodingKeys: String, CodingKey {
        case products
        case invalidProductIDs = "invalid_product_ids"
        case nextCursor = "next_cursor"
    }
}
