import Foundation

/// Where things live under the cache root.
///
/// ```
/// <root>/journal.json            the journal's snapshot (and journal.prev.json, the previous good copy)
/// <root>/journal.log             the changes since the snapshot, one JSON line each
/// <root>/Markers/<product_id>.json   the identity of installed content's folders, for the per-product check
/// <root>/catalog.json            the last catalog answers for `ids` with their ETags
/// <root>/catalog-mirror.json     the whole catalog, kept up to date with the change feed
/// <root>/installation-id         this installation's ID, sent with grant requests
/// <root>/Staging/<product_id>/   files being downloaded (`<path>.part`, then `<path>` once verified)
/// <root>/Content/<product_id>/<version>/<path>   installed content
/// ```
public struct CacheLayout: Sendable, Hashable {
    /// The cache root.
    public let root: URL

    /// Creates a layout under `root`.
    public init(root: URL) { self.root = root.standardizedFileURL }

    /// The default cache root: `…/Caches/Kiosk` on Apple platforms, `$XDG_CACHE_HOME/kiosk` or `~/.cache/kiosk`
    /// elsewhere.
    public static var defaultRoot: URL {
        #if canImport(Darwin)
            let caches =
                FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
                ?? URL(fileURLWithPath: NSTemporaryDirectory())
            return caches.appendingPathComponent("Kiosk", isDirectory: true)
        #else
            let environment = ProcessInfo.processInfo.environment
            if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
                return URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("kiosk", isDirectory: true)
            }
            let home =
                environment["HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
                ?? FileManager.default.homeDirectoryForCurrentUser
            return home.appendingPathComponent(".cache/kiosk", isDirectory: true)
        #endif
    }

    /// Where KioskKit up to c8cc5f8 kept the installation ID. It is now kept out of the cache root
    /// (``InstallationIdentity``); one found here is taken over when the new place has none.
    public var installationIDFile: URL { root.appendingPathComponent(InstallationIdentity.fileName) }
    /// The journal file.
    public var journal: URL { root.appendingPathComponent("journal.json") }
    /// The cached catalog answers for lists of IDs.
    public var catalogCache: URL { root.appendingPathComponent("catalog.json") }
    /// The copy of the whole catalog, kept up to date with the change feed.
    public var catalogMirror: URL { root.appendingPathComponent("catalog-mirror.json") }
    /// The staging folder of all downloads.
    public var stagingRoot: URL { root.appendingPathComponent("Staging", isDirectory: true) }
    /// The folder of all installed content.
    public var contentRoot: URL { root.appendingPathComponent(Self.contentFolderName, isDirectory: true) }
    /// The name of ``contentRoot`` in the cache root.
    static let contentFolderName = "Content"
    /// The folder of the previous versions kept by updates (see
    /// ``KioskClient/update(productID:proof:priority:keepingPrevious:)``).
    public var keptRoot: URL { root.appendingPathComponent("Kept", isDirectory: true) }

    /// The staging folder of one product.
    public func staging(productID: String) -> URL {
        stagingRoot.appendingPathComponent(productID, isDirectory: true)
    }

    /// A verified file in staging.
    public func stagedFile(productID: String, path: String) -> URL {
        staging(productID: productID).appendingPathComponent(path, isDirectory: false)
    }

    /// A partial file in staging (`<path>.part`).
    public func partFile(productID: String, path: String) -> URL {
        staging(productID: productID).appendingPathComponent(path + ".part", isDirectory: false)
    }

    /// The folder of a previous version of a product kept by an update.
    public func kept(productID: String, version: String) -> URL {
        keptRoot.appendingPathComponent(productID, isDirectory: true).appendingPathComponent(version, isDirectory: true)
    }

    /// The installed folder of one version of a product.
    public func content(productID: String, version: String) -> URL {
        contentRoot.appendingPathComponent(productID, isDirectory: true)
            .appendingPathComponent(version, isDirectory: true)
    }
}
