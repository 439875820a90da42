import Foundation

/// Where a product stands in catalog order: dated products first, newest first, then undated ones; ties by product
/// ID. Every product has one key and no two products share one, so a key marks a position between pages.
struct CatalogKey: Comparable, Sendable, Hashable {
    /// `published_at` as seconds since 1970, nil for an undated product.
    var published: Double?
    /// The product ID.
    var id: String

    /// The key of a product.
    init(_ product: CatalogProduct) {
        self.init(published: product.info.publishedAt?.timeIntervalSince1970, id: product.info.productID)
    }

    init(published: Double?, id: String) {
        self.published = published
        self.id = id
    }

    /// `lhs` comes before `rhs` in catalog order.
    static func < (lhs: CatalogKey, rhs: CatalogKey) -> Bool {
        switch (lhs.published, rhs.published) {
        case (let left?, let right?) where left != right: return left > right
        case (.some, nil): return true
        case (nil, .some): return false
        default: return lhs.id < rhs.id
        }
    }
}

/// The opaque `cursor` of catalog pages and of the change feed: a position in catalog order, and for the feed where
/// the walk started. On the wire it is base64url JSON, which clients must not look into.
struct CatalogCursor: Codable, Sendable, Hashable {
    /// The format; a cursor of another version is refused.
    var version = 1
    /// The last product sent: the next page starts after it. Nil: no product has been sent yet.
    var published: Double?
    var id: String?
    /// Feed only: the last removed ID sent (removals follow the products).
    var removed: String?
    /// Feed only: the `since` tag of the walk.
    var since: String?
    /// Feed only: the catalog tag the walk reports (that of its first page), and whether it sends the whole catalog.
    var base: String?
    var full: Bool?

    enum CodingKeys: String, CodingKey {
        case version = "v", published = "p", id = "i", removed = "r", since = "s", base = "b", full = "f"
    }

    /// The product position, nil before the first product.
    var key: CatalogKey? { id.map { CatalogKey(published: published, id: $0) } }

    /// Cursors longer than this are not ours.
    static let maximumLength = 1024

    /// The wire form.
    var encoded: String {
        let json = (try? JSONEncoder().encode(self)) ?? Data()  // strings and numbers always encode
        return json.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Reads a wire cursor; nil when it is not one this server wrote.
    init?(encoded: String) {
        guard !encoded.isEmpty, encoded.count <= Self.maximumLength else { return nil }
        var base64 = encoded.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let cursor = try? JSONDecoder().decode(Self.self, from: data),
            cursor.version == 1, cursor.published.map(\.isFinite) ?? true
        else { return nil }
        self = cursor
    }

    init(after key: CatalogKey?) {
        self.published = key?.published
        self.id = key?.id
    }
}
