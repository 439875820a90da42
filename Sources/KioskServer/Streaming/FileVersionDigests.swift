import Crypto
import Foundation
import KioskCore
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A SHA-256 for each version of a file (its path and ``FileIdentity``), computed the first time it is asked for,
/// once however many requests ask at the same time, and kept for as long as the file is the same: a file that
/// changes is hashed again. What ``BenchFolder`` keeps of its files' digests, and ``ChangedDigests`` of their
/// changed versions'.
actor FileVersionDigests {
    /// How many files are remembered before the memory starts over.
    static let limit = 10_000

    private var known: [String: (identity: FileIdentity, digest: SHA256Digest)] = [:]
    private var hashing: [String: (identity: FileIdentity, task: Task<SHA256Digest, any Error>)] = [:]

    /// A memory of no files yet.
    init() {}

    /// The digest of the file at `path` in its version `identity`: remembered, or being computed by an earlier
    /// caller, or computed now by `compute`.
    func digest(
        of path: String, identity: FileIdentity, compute: @escaping @Sendable () async throws -> SHA256Digest
    ) async throws -> SHA256Digest {
        if let entry = known[path], entry.identity == identity { return entry.digest }
        if let entry = hashing[path], entry.identity == identity { return try await entry.task.value }
        let task = Task(operation: compute)
        hashing[path] = (identity, task)
        defer { if hashing[path]?.identity == identity { hashing[path] = nil } }
        let digest = try await task.value
        if known.count >= Self.limit, known[path] == nil { known.removeAll() }
        known[path] = (identity, digest)
        return digest
    }

    /// The SHA-256 of the file open as `descriptor`, on the thread pool, read through a duplicate of the descriptor
    /// (so that the caller may close its own while later callers still wait for this digest), each piece passed
    /// through `transform` first.
    /// - Throws: a `not_ready` ``APIError`` when the file is no longer `identity` (or `length` bytes long, when
    ///   given) after the last read: it changed while it was read.
    static func sha256(
        of descriptor: CInt, identity: FileIdentity, length: Int64? = nil,
        transform: @escaping @Sendable (UnsafeMutableRawBufferPointer) -> Void = { _ in }
    ) async throws -> SHA256Digest {
        let copy = dup(descriptor)
        guard copy >= 0 else { throw IOError(errnoCode: errno, reason: "dup") }
        return try await NIOThreadPool.singleton.runIfActive {
            defer { close(copy) }
            return try hash(copy, identity: identity, length: length, transform: transform)
        }
    }

    /// ``sha256(of:identity:length:transform:)`` on the calling thread, 1 MiB at a time with `pread(2)`. Blocking.
    private static func hash(
        _ descriptor: CInt, identity expectedIdentity: FileIdentity, length expectedLength: Int64?,
        transform: (UnsafeMutableRawBufferPointer) -> Void
    ) throws -> SHA256Digest {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
        defer { buffer.deallocate() }
        var hasher = SHA256()
        var offset: off_t = 0
        while true {
            let count = pread(descriptor, buffer.baseAddress, buffer.count, offset)
            if count < 0 {
                if errno == EINTR { continue }
                throw IOError(errnoCode: errno, reason: "pread")
            }
            if count == 0 { break }
            let read = UnsafeMutableRawBufferPointer(rebasing: buffer[..<count])
            transform(read)
            hasher.update(bufferPointer: UnsafeRawBufferPointer(read))
            offset += off_t(count)
        }
        // Changed while it was read: the digest may describe no version of it.
        guard expectedLength.map({ Int64(offset) == $0 }) ?? true,
            FileIdentity(descriptor: descriptor) == expectedIdentity
        else {
            throw APIError(
                .notReady, "The file changed while it was being hashed; try again.", headers: ["Retry-After": "1"])
        }
        return SHA256Digest(hasher.finalize())
    }
}
