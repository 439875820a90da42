import Foundation

/// `kiosk content push`: uploads each product's current version to an S3-compatible store, keyed by version
/// (``key(prefix:productID:version:path:)``) so that versions never overwrite each other, and skips the objects
/// already there with the same SHA-256. A CDN or the store then sends the bytes that grants point at.
public struct ContentPush: Sendable {
    /// What a push did.
    public struct Report: Sendable, Hashable {
        /// Objects uploaded.
        public var pushed = 0
        /// Their bytes.
        public var pushedBytes: Int64 = 0
        /// Objects already there with the same SHA-256.
        public var skipped = 0
        /// Their bytes.
        public var skippedBytes: Int64 = 0

        /// A report of these counts (none by default).
        public init(pushed: Int = 0, pushedBytes: Int64 = 0, skipped: Int = 0, skippedBytes: Int64 = 0) {
            self.pushed = pushed
            self.pushedBytes = pushedBytes
            self.skipped = skipped
            self.skippedBytes = skippedBytes
        }

        /// Adds `other`'s counts.
        public mutating func add(_ other: Report) {
            pushed += other.pushed
            pushedBytes += other.pushedBytes
            skipped += other.skipped
            skippedBytes += other.skippedBytes
        }
    }

    /// Where the objects go.
    public let store: S3ObjectStore
    /// The key prefix, without a trailing `/` (empty: the bucket's root).
    public let prefix: String
    /// How many uploads run at once.
    public let concurrency: Int
    /// Files larger than this go in a multipart upload, in parts of this size (the last one shorter).
    public let partSize: Int64

    /// The default part size: 64 MiB, so that one `PUT` never carries more and a file of up to 625 GiB fits in
    /// S3's 10,000 parts.
    public static let defaultPartSize: Int64 = 64 << 20

    /// A push to `store` under `prefix` (a trailing `/` is ignored), `concurrency` uploads at a time (at least 1),
    /// files over `partSize` (at least S3's 5 MiB, at most its 5 GiB) uploaded in parts of that size.
    public init(store: S3ObjectStore, prefix: String, concurrency: Int = 4, partSize: Int64 = defaultPartSize) {
        self.store = store
        var prefix = prefix
        while prefix.hasSuffix("/") { prefix.removeLast() }
        self.prefix = prefix
        self.concurrency = max(1, concurrency)
        self.partSize = min(max(partSize, S3ObjectStore.smallestPart), S3StoreError.largestPut)
    }

    /// The object key of a file: `<prefix>/<product_id>/<content_version>/<path>` (no leading `/` when the prefix is
    /// empty). A new version has new keys: objects of a version are never overwritten by another's.
    public static func key(prefix: String, productID: String, version: String, path: String) -> String {
        (prefix.isEmpty ? "" : prefix + "/") + productID + "/" + version + "/" + path
    }

    /// Pushes the current version of `product`: each file whose object is missing or has another SHA-256 is
    /// uploaded, the others skipped.
    public func push(_ product: CatalogProduct) async throws -> Report {
        let keyed = product.files.map { file in
            (
                file,
                Self.key(
                    prefix: prefix, productID: product.info.productID, version: product.info.contentVersion,
                    path: file.path)
            )
        }
        let (store, partSize) = (self.store, self.partSize)
        return try await withThrowingTaskGroup(of: Report.self) { group in
            var report = Report()
            var next = keyed.makeIterator()
            func addNext() -> Bool {
                guard let (file, key) = next.next() else { return false }
                group.addTask { try await Self.push(file, as: key, to: store, partSize: partSize) }
                return true
            }
            for _ in 0..<concurrency where !addNext() { break }
            while let one = try await group.next() {
                report.add(one)
                _ = addNext()
            }
            return report
        }
    }

    /// Uploads `file` as `key` unless the object there has its SHA-256: in one `PUT` up to `partSize` bytes, in parts
    /// of `partSize` beyond.
    private static func push(
        _ file: ManifestFile, as key: String, to store: S3ObjectStore, partSize: Int64
    ) async throws -> Report {
        if try await store.pushedSHA256(of: key) == file.sha256 {
            return Report(skipped: 1, skippedBytes: file.length)
        }
        let contentType = MediaTypes.forPath(file.path)
        if file.length > partSize {
            try await store.putInParts(
                key: key, file: file.absolutePath, length: file.length, digest: file.digest, contentType: contentType,
                partSize: partSize)
        } else {
            try await store.put(
                key: key, file: file.absolutePath, length: file.length, digest: file.digest, contentType: contentType)
        }
        return Report(pushed: 1, pushedBytes: file.length)
    }
}
