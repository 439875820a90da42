import Foundation
import KioskCore
import KioskStore

/// One file of a product version, hashed: what a grant lists and what the content route serves.
///
/// A catalog holds one per content file (100,000 of them at scale), so it stores only what it cannot share: its
/// path, its digest as 32 bytes, its chunks (none for a file of one chunk) and its identity; the product folder is
/// one string shared by the product's files.
public struct ManifestFile: Sendable, Hashable {
    /// The path inside the product folder, e.g. `Contents/issue.pdf`.
    public var path: String
    /// The product folder on disk, absolute.
    public var directory: String
    /// Its SHA-256.
    public var digest: SHA256Digest
    /// Its content-defined chunks (cut with ``ChunkingParameters/standard``), in order; empty for a file of one
    /// chunk, whose digest is ``digest``.
    public var chunks: [FileChunk] = []
    /// The file as it was hashed: a file whose identity has changed since must be hashed again before it is served.
    public var identity: FileIdentity

    /// The file on disk.
    public var absolutePath: String { directory + "/" + path }
    /// Its lowercase hex SHA-256.
    public var sha256: String { digest.hexString }
    /// Its size in bytes.
    public var length: Int64 { identity.size }
    /// Its modification time, as the file system reports it (nanoseconds since 1970).
    public var modifiedNanoseconds: Int64 { identity.modifiedNanoseconds }

    /// The strong entity tag: the SHA-256 in quotes, so a changed file always gets a new tag.
    public var entityTag: EntityTag { EntityTag.content(sha256: sha256)! }  // hex digits are valid tag characters
    /// `Last-Modified`, truncated to whole seconds as HTTP dates are.
    public var lastModified: Date { Date(timeIntervalSince1970: TimeInterval(modifiedNanoseconds / 1_000_000_000)) }
    /// The RFC 9530 `Repr-Digest` value: `sha-256=:<base64>:`.
    public var representationDigest: String { "sha-256=:\(digest.base64):" }
}

/// A product as loaded from its folder: its `Info.json` and its hashed files.
public struct CatalogProduct: Sendable, Hashable {
    /// The parsed `Info.json`.
    public let info: ProductInfo
    /// The files of the current version, in path order.
    public let files: [ManifestFile]
    /// Each file's index in ``files``, by path: a content request finds its file in constant time.
    private let indexByPath: [String: Int]

    /// A product with its files, in path order.
    public init(info: ProductInfo, files: [ManifestFile]) {
        self.info = info
        self.files = files
        self.indexByPath = Dictionary(files.enumerated().map { ($1.path, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The sum of the file sizes.
    public var contentLength: Int64 { files.reduce(0) { $0 + $1.length } }

    /// The file at a product-relative path.
    public func file(atPath path: String) -> ManifestFile? { indexByPath[path].map { files[$0] } }

    /// Products are equal when their `Info.json` and files are (the index follows from the files).
    public static func == (lhs: CatalogProduct, rhs: CatalogProduct) -> Bool {
        lhs.info == rhs.info && lhs.files == rhs.files
    }

    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(info)
        hasher.combine(files)
    }

    /// The catalog entry for this product.
    public var product: Product {
        Product(
            id: info.productID, type: info.type, title: info.title, description: info.description,
            contentVersion: info.contentVersion, contentLength: contentLength, fileCount: files.count,
            publishedAt: info.publishedAt)
    }
}

/// An immutable view of the whole content folder at one moment. Reloads build a new snapshot and swap it in.
public struct CatalogSnapshot: Sendable {
    /// Products by ID.
    public let products: [String: CatalogProduct]
    /// Products in catalog order: dated ones newest first, then undated ones; ties by ID.
    public let ordered: [CatalogProduct]
    /// Folders that were skipped or files that were left out, with the reason.
    public let problems: [ContentProblem]
    /// The catalog answers, encoded once for this snapshot.
    public let encoded: EncodedCatalog
    /// What the entitlement policy needs of the catalog, built once for this snapshot.
    public let entitlements: EntitlementCatalog
    /// The grants' file lists, encoded on the first grant for each product and dropped with this snapshot.
    let grantFiles = GrantFileListCache()

    /// Creates a snapshot from loaded products, encoding the catalog.
    public init(products: [CatalogProduct], problems: [ContentProblem]) {
        self.products = Dictionary(products.map { ($0.info.productID, $0) }, uniquingKeysWith: { first, _ in first })
        self.ordered = products.sorted { CatalogKey($0) < CatalogKey($1) }
        self.problems = problems
        self.encoded = EncodedCatalog(products: ordered)
        self.entitlements = EntitlementCatalog(
            self.products.mapValues {
                EntitlementProduct(type: $0.info.type, publishedAt: $0.info.publishedAt, unlocks: $0.info.unlocks)
            })
    }

    /// The catalog answer, optionally filtered to `ids` (unknown IDs are listed as invalid, in request order).
    public func catalog(ids: [String]?) -> CatalogResponse {
        guard let ids else { return CatalogResponse(products: ordered.map(\.product)) }
        var seen = Set<String>()
        var found: [Product] = []
        var invalid: [String] = []
        for id in ids where seen.insert(id).inserted {
            if let product = products[id] { found.append(product.product) } else { invalid.append(id) }
        }
        return CatalogResponse(products: found, invalidProductIDs: invalid)
    }
}
