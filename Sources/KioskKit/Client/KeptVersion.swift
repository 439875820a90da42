import Foundation

/// A previous version of a product kept by an update (see
/// ``KioskClient/update(productID:proof:priority:keepingPrevious:)`` and ``KioskClient/keptVersions(of:)``).
public struct KeptVersion: Sendable, Hashable {
    /// The product.
    public var productID: String
    /// The kept version (its `content_version`).
    public var version: String
    /// Its folder, with the files as they were installed (paths relative to it, as in ``InstalledContent``).
    public var directory: URL

    /// A kept version of a product in `directory`.
    public init(productID: String, version: String, directory: URL) {
        self.productID = productID
        self.version = version
        self.directory = directory
    }
}
