import Crypto
import Foundation
import KioskCore
import NIOCore
import NIOPosix

/// The version of a file that the fault `changed` answers with, as if the file had been replaced on the server:
/// every byte XOR ``mask`` (the same at every position, so any range of the changed version is that range of the
/// file transformed, and bytes stitched from both versions are neither), a strong `ETag` of its own (its SHA-256
/// when the route knows it, as a content file's is; the file's tag with ``tagSuffix`` otherwise, for a pack), a
/// `Last-Modified` ``lastModifiedShift`` later, and a `Repr-Digest` of its own.
enum ChangedVersion {
    /// What every byte is XORed with.
    static let mask: UInt8 = 0x5A
    /// How much later than the file the changed version was modified.
    static let lastModifiedShift: TimeInterval = 86_400
    /// Added to the `ETag` of a representation whose changed digest is not known (a pack's, which has no
    /// `Repr-Digest`): `-`, `c`, `h`… are valid entity-tag characters.
    static let tagSuffix = "-changed"

    /// Turns `bytes` of the file into the same bytes of the changed version, in place (and back: XOR is its own
    /// inverse).
    static func transform(_ bytes: UnsafeMutableRawBufferPointer) {
        for index in bytes.indices { bytes[index] ^= mask }
    }

    /// Turns the readable bytes of `buffer` into the changed version's, in place.
    static func transform(_ buffer: inout ByteBuffer) {
        buffer.withUnsafeMutableReadableBytes { transform($0) }
    }
}

/// The SHA-256 of the changed version (``ChangedVersion``) of each file answered under `changed`, by path and
/// identity, as ``BenchFolder`` keeps each file's own digest: computed the first time it is asked for, on the
/// thread pool, once however many requests ask at the same time, and kept for as long as the file is the same (its
/// ``FileIdentity``): a file that changes is hashed again.
actor ChangedDigests {
    /// How many files are remembered before the memory starts over.
    static let limit = 10_000

    private var known: [String: (identity: FileIdentity, digest: SHA256Digest)] = [:]
    private var hashing: [String: (identity: FileIdentity, task: Task<SHA256Digest, any Error>)] = [:]

    /// A memory of no files yet.
    init() {}

    /// The SHA-256 of the changed version of `file`, the version it was opened at.
    /// - Throws: a `not_ready` ``APIError`` when the file changed while it was being read.
    func digest(of file: OpenContentFile) async throws -> SHA256Digest {
        let (path, identity) = (file.path, file.file.identity)
        if let entry = known[path], entry.identity == identity { return entry.digest }
        if let entry = hashing[path], entry.identity == identity { return try await entry.task.value }
        let task = Task<SHA256Digest, any Error> {
            try await NIOThreadPool.singleton.runIfActive { try Self.hash(file) }
        }
        hashing[path] = (identity, task)
        defer { if hashing[path]?.identity == identity { hashing[path] = nil } }
        let digest = try await task.value
        if known.count >= Self.limit, known[path] == nil { known.removeAll() }
        known[path] = (identity, digest)
        return digest
    }

    /// The SHA-256 of `file`'s bytes transformed, read with `pread(2)` from its start. Blocking.
    private static func hash(_ file: OpenContentFile) throws -> SHA256Digest {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
        defer { buffer.deallocate() }
        var hasher = SHA256()
        var offset: Int64 = 0
        while true {
            let count = try file.read(into: buffer, at: offset)
            if count == 0 { break }
            let read = UnsafeMutableRawBufferPointer(rebasing: buffer[..<count])
            ChangedVersion.transform(read)
            hasher.update(bufferPointer: UnsafeRawBufferPointer(read))
            offset += Int64(count)
        }
        // Changed while it was read: the digest may describe no version of it.
        guard offset == file.file.length, file.currentIdentity == file.file.identity else {
            throw APIError(
                .notReady, "The file changed while it was being hashed; try again.", headers: ["Retry-After": "1"])
        }
        return SHA256Digest(hasher.finalize())
    }
}
