import Foundation

/// One file of installed content.
public struct InstalledFile: Sendable, Hashable, Codable {
    /// The path inside the product, e.g. `Contents/issue.pdf`.
    public var path: String
    /// Its size in bytes.
    public var length: Int64
    /// Its lowercase hex SHA-256 (empty when the journal was rebuilt from the disk and the hash is not known).
    public var sha256: String

    /// Creates a file entry.
    public init(path: String, length: Int64, sha256: String) {
        self.path = path
        self.length = length
        self.sha256 = sha256
    }
}

/// A product version whose files are verified and in place.
public struct InstalledContent: Sendable, Hashable, Codable {
    /// The product.
    public var productID: String
    /// The installed version.
    public var version: String
    /// The folder holding the files (`Content/<product_id>/<version>/` under the cache root, unless moved with
    /// ``KioskClient/moveContentOutOfCaches(productID:to:)``).
    public var directory: URL
    /// The files, relative to ``directory``.
    public var files: [InstalledFile]
    /// When it was installed.
    public var installedAt: Date
    /// Whether the app moved it out of the caches directory (then the library no longer deletes it on `remove`).
    public var isOutsideCaches: Bool

    /// Creates an installed-content value.
    public init(
        productID: String, version: String, directory: URL, files: [InstalledFile], installedAt: Date,
        isOutsideCaches: Bool = false
    ) {
        self.productID = productID
        self.version = version
        self.directory = directory
        self.files = files
        self.installedAt = installedAt
        self.isOutsideCaches = isOutsideCaches
    }

    /// The total size of the files.
    public var totalLength: Int64 { files.reduce(0) { $0 + $1.length } }

    /// The URL of one file, by its path as the grant lists it (`Contents/issue.pdf`) or within the product's
    /// `Contents/` folder (`issue.pdf`, as an app names its files).
    ///
    /// ```swift
    /// let pdf = content.url(for: "issue.pdf")  // …/Content/<product>/<version>/Contents/issue.pdf
    /// ```
    ///
    /// A path that names no file of the content as it is given and names one under `Contents/` is taken as that
    /// one; any other path is resolved in ``directory`` as it is.
    public func url(for path: String) -> URL {
        let inContents = Self.contentsFolder + path
        if !files.contains(where: { $0.path == path }), files.contains(where: { $0.path == inContents }) {
            return fileURL(inContents)
        }
        return fileURL(path)
    }

    /// The URL of the file listed as `path` (KioskKit's own look-ups: no search of ``files``).
    func fileURL(_ path: String) -> URL { directory.appendingPathComponent(path, isDirectory: false) }

    /// The folder of a product's files inside its content (`Contents/`, as in Apple's hosted content packages).
    static let contentsFolder = "Contents/"
}
