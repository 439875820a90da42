import Foundation
import HTTPTypes
import KioskCore
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

#if canImport(Darwin)
    import Darwin
#else
    import Glibc
#endif

/// A content file opened for serving, with the response headers that depend only on it, computed once.
///
/// Shared by every response that streams it; the descriptor closes when the last of them and the cache have let go
/// of it.
final class OpenContentFile: Sendable {
    /// The product the file belongs to.
    let productID: String
    /// The manifest entry the descriptor was opened for (its identity was checked against the open file).
    let file: ManifestFile
    /// Where it was opened: the file's absolute path, the cache's key.
    let path: String
    /// The open descriptor, read-only, owned by this object.
    /// The open file (the module's hashing reads it through a duplicate: ``FileVersionDigests``).
    let descriptor: CInt
    /// Its length and validators, as the precondition and range evaluation take them.
    let representation: RepresentationMetadata
    /// `ETag`.
    let entityTagHeader: String
    /// `Last-Modified`.
    let lastModifiedHeader: String
    /// `Repr-Digest`.
    let representationDigest: String
    /// `Content-Type`, from the file name.
    let contentType: String
    /// The header lines every content answer for it carries, a 304's too (``RangeResponder/Resource/headers``),
    /// as answers sent from the event loop write them.
    let encodedHeaderLines: ByteBuffer

    /// The fields a content answer carries after the validators, `Accept-Ranges` and `Cache-Control`.
    let extraHeaders: HTTPFields

    /// The open file `descriptor`, which it now owns, as `file` of product `productID` (`kiosk bench` serves
    /// files of no product: ""). The caller has checked that the descriptor is the version `file` describes.
    convenience init(adopting descriptor: CInt, productID: String, file: ManifestFile) {
        self.init(productID: productID, file: file, path: file.absolutePath, descriptor: descriptor)
    }

    fileprivate init(productID: String, file: ManifestFile, path: String, descriptor: CInt) {
        self.productID = productID
        self.file = file
        self.path = path
        self.descriptor = descriptor
        self.representation = RepresentationMetadata(
            length: file.length, entityTag: file.entityTag, lastModified: file.lastModified)
        self.entityTagHeader = representation.entityTag.headerValue
        self.lastModifiedHeader = HTTPDate.format(file.lastModified)
        self.representationDigest = file.representationDigest
        self.contentType = MediaTypes.forPath(file.path)
        self.extraHeaders = [.reprDigest: file.representationDigest]
        var lines = ByteBuffer()
        lines.writeHeaderLines(
            RangeResponder.Resource.headers(
                entityTag: entityTagHeader, lastModified: lastModifiedHeader, extra: extraHeaders))
        self.encodedHeaderLines = lines
    }

    deinit {
        close(descriptor)
    }

    /// A handle of its own for one response, to be closed by it: NIO lets one handle be used by one write at a
    /// time, and responses on other event loops write concurrently. The copy (`dup(2)`) reads the same open file;
    /// `sendfile(2)` reads at explicit offsets, so the responses never disturb one another.
    func duplicateHandle() throws -> NIOFileHandle {
        let copy = dup(descriptor)
        guard copy >= 0 else { throw IOError(errnoCode: errno, reason: "dup") }
        return NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: copy)
    }

    /// Reads the bytes at `offset` into `buffer` with `pread(2)`, which leaves the descriptor's position alone, so
    /// the responses streaming the file are not disturbed. Blocking: call it on a thread that may block.
    ///
    /// - Returns: how many bytes were read: all of `buffer` unless the file ends first.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var total = 0
        while total < buffer.count {
            let count = pread(descriptor, base + total, buffer.count - total, off_t(offset) + off_t(total))
            if count < 0 {
                if errno == EINTR { continue }
                throw IOError(errnoCode: errno, reason: "pread")
            }
            if count == 0 { break }
            total += count
        }
        return total
    }

    /// Opens `file` without following links and checks that the open file is the one the manifest describes.
    /// Blocking: call it on a thread that may block.
    ///
    /// - Returns: nil when the file is gone, is not a regular file, or is not the version that was hashed.
    fileprivate static func opening(_ file: ManifestFile, of productID: String, at path: String) -> OpenContentFile? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return nil }
        guard FileIdentity(descriptor: descriptor) == file.identity else {
            close(descriptor)
            return nil
        }
        return OpenContentFile(productID: productID, file: file, path: path, descriptor: descriptor)
    }
}

/// The open descriptors of recently served content files, so that a request for a file served before costs no
/// `open`, `fstat` or `close`, and no hop to the thread pool (nginx's `open_file_cache`).
///
/// Entries are keyed by path and valid only for the file identity they were opened at; the catalog drops every
/// entry its new snapshot no longer describes when it swaps one in (``retainOnly(_:)``), so a replaced or deleted
/// file's descriptor does not outlive the responses still streaming it. At most ``capacity`` descriptors are kept;
/// past that the oldest entry is dropped first.
final class OpenFileCache: Sendable {
    /// How many descriptors are kept at most.
    let capacity: Int
    private let state: NIOLockedValueBox<State>

    private struct State {
        var entries: [String: OpenContentFile] = [:]
        /// Insertion order, as a ring of `capacity` slots; `next` is the oldest when the ring is full.
        var ring: [String] = []
        var next = 0
        /// Bumped by every ``retainOnly(_:)``: an open started before it does not insert its result.
        var epoch: UInt64 = 0
    }

    /// A cache of at most `capacity` descriptors (at least one).
    init(capacity: Int = OpenFileCache.defaultCapacity) {
        self.capacity = max(1, capacity)
        self.state = NIOLockedValueBox(State())
    }

    /// A quarter of the process's descriptor limit, between 16 and 4,096: connections need the rest.
    static var defaultCapacity: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 256 }
        return Int(min(max(limit.rlim_cur / 4, 16), 4096))
    }

    /// How many descriptors the cache holds now.
    var count: Int { state.withLockedValue { $0.entries.count } }

    /// The open file for `file` of product `productID`, at `path` (its ``ManifestFile/absolutePath``, which the
    /// caller has already built to check the file): from the cache when it holds that version, otherwise opened on
    /// the thread pool.
    ///
    /// - Returns: nil when the file on disk is no longer the version `file` describes (or is gone).
    func open(_ file: ManifestFile, of productID: String, at path: String) async -> OpenContentFile? {
        let (cached, epoch) = state.withLockedValue { (Self.entry(for: file, at: path, in: $0), $0.epoch) }
        if let cached { return cached }
        let opening: @Sendable () -> OpenContentFile? = { OpenContentFile.opening(file, of: productID, at: path) }
        guard let opened = try? await NIOThreadPool.singleton.runIfActive(opening) else { return nil }
        state.withLockedValue { state in
            guard state.epoch == epoch else { return }
            insert(opened, into: &state)
        }
        return opened
    }

    /// The open file for `file` at `path` when the cache holds that version, without opening it otherwise.
    func cached(_ file: ManifestFile, at path: String) -> OpenContentFile? {
        state.withLockedValue { Self.entry(for: file, at: path, in: $0) }
    }

    private static func entry(for file: ManifestFile, at path: String, in state: State) -> OpenContentFile? {
        state.entries[path].flatMap { $0.file == file ? $0 : nil }
    }

    /// Drops every entry that `isCurrent` rejects: the catalog calls this with its new snapshot.
    func retainOnly(_ isCurrent: (OpenContentFile) -> Bool) {
        // The dropped entries are returned, so their descriptors close outside the lock.
        _ = state.withLockedValue { state -> [OpenContentFile] in
            state.epoch &+= 1
            let stale = state.entries.values.filter { !isCurrent($0) }
            guard !stale.isEmpty else { return [] }
            for entry in stale { state.entries[entry.path] = nil }
            state.ring = state.ring.filter { state.entries[$0] != nil }
            state.next = 0
            return stale
        }
    }

    private func insert(_ opened: OpenContentFile, into state: inout State) {
        let key = opened.path
        if state.entries.updateValue(opened, forKey: key) != nil { return }  // a newer version under the same path
        if state.ring.count < capacity {
            state.ring.append(key)
            return
        }
        state.entries[state.ring[state.next]] = nil
        state.ring[state.next] = key
        state.next = (state.next + 1) % capacity
    }
}
