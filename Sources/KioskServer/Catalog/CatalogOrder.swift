import Foundation
import KioskCore

extension CatalogKey {
    /// The key of a loaded product.
    init(_ product: CatalogProduct) {
        self.init(published: product.info.publishedAt?.timeIntervalSince1970, id: product.info.productID)
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
