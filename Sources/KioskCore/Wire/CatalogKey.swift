import Foundation

/// Where a product stands in catalog order: dated products first, newest first, then undated ones; ties by product
/// ID. Every product has one key and no two products share one, so a key marks a position between pages. The server
/// orders its catalog and pages by it, and KioskKit orders its copy of the catalog the same way.
public struct CatalogKey: Comparable, Sendable, Hashable {
    /// `published_at` as seconds since 1970, nil for an undated product.
    public var published: Double?
    /// The product ID.
    public var id: String

    /// The key of a catalog entry.
    public init(_ product: Product) {
        self.init(published: product.publishedAt?.timeIntervalSince1970, id: product.id)
    }

    /// A key from its parts.
    public init(published: Double?, id: String) {
        self.published = published
        self.id = id
    }

    /// `lhs` comes before `rhs` in catalog order.
    public static func < (lhs: CatalogKey, rhs: CatalogKey) -> Bool {
        switch (lhs.published, rhs.published) {
        case (let left?, let right?) where left != right: return left > right
        case (.some, nil): return true
        case (nil, .some): return false
        default: return lhs.id < rhs.id
        }
    }
}
