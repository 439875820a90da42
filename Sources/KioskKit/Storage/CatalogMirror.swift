import Foundation
import KioskCore

/// The app's copy of the server's whole catalog, kept in the cache root and brought up to date with the change feed
/// (`GET /v1/products?since=<catalog ETag>`): after one product changed, a launch costs one small request instead of
/// the whole catalog.
///
/// A walk of the feed (``CatalogFeedWalk``) replaces the copy only once its last page has arrived, so the copy on
/// disk is always a catalog the server served, never half of one.
struct CatalogMirror: Codable, Sendable, Equatable {
    /// The file format; a copy in another format is ignored (and rebuilt from the server).
    static let currentFormat = 1

    var format = CatalogMirror.currentFormat
    /// The catalog `ETag` the copy matches (header form, with quotes): sent as `since` next time.
    var catalogETag: String
    /// The products, by ID.
    var products: [String: Product]
    /// When the client last kept a copy that differed from the one before (``KioskClient`` sets it): what it says is
    /// news to content installed before then, not to content installed since. `nil` in a copy written before the
    /// key existed.
    var changedAt: Date? = nil

    enum CodingKeys: String, CodingKey {
        case format, products
        case catalogETag = "catalog_etag"
        case changedAt = "changed_at"
    }

    /// The products in catalog order (dated ones newest first, then undated ones; ties by ID), as the server
    /// orders its catalog.
    var ordered: [Product] { products.values.sorted { CatalogKey($0) < CatalogKey($1) } }

    /// The version the server serves of installed `content` when it is not the installed one and the copy learnt it
    /// after the content was installed (see ``changedAt``); `nil` otherwise. A copy older than the install says
    /// nothing about it: the install itself fetched the version the server served then.
    func newerVersion(than content: InstalledContent) -> String? {
        guard let served = products[content.productID]?.contentVersion, served != content.version,
            let changedAt, changedAt > content.installedAt
        else { return nil }
        return served
    }

    /// The copy kept at `url`, nil when there is none or it cannot be read (it is then rebuilt from the server).
    static func load(from url: URL, fileSystem: any KioskFileSystem) -> CatalogMirror? {
        guard let data = fileSystem.contents(of: url),
            let mirror = try? KioskJSON.decode(CatalogMirror.self, from: data), mirror.format == currentFormat
        else { return nil }
        return mirror
    }

    /// Writes the copy to `url` atomically.
    func save(to url: URL, fileSystem: any KioskFileSystem) throws {
        try CacheFiles.writeAtomically(try KioskJSON.encode(self), to: url, fileSystem: fileSystem)
    }
}
