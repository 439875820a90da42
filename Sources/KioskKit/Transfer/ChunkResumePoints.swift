import Crypto
import Foundation

/// Chunks cut short by the end of an earlier transfer in this process (its grant refused, a pause, a network
/// failure): how many of their first bytes the part file holds, and the SHA-256 of those bytes as they arrived. The
/// next run of such a chunk reads them back from the part, checks them against that digest, goes on hashing from
/// there and asks only for the rest. So a chunk longer than what one token, one attempt or one connection carries
/// still completes, and a renewal of the grant costs no byte twice. In memory only: after a kill, a chunk in flight
/// starts over (it was not verified).
final class ChunkResumePoints: Sendable {
    /// A chunk of a part file: where it starts and the digest the grant gives it.
    struct Key: Hashable, Sendable {
        var part: String
        var offset: Int64
        var sha256: String
    }

    /// The first bytes of a chunk in the part file.
    struct Point: Sendable, Equatable {
        /// How many (more than 0, fewer than the chunk's length).
        var bytes: Int64
        /// Their SHA-256 (lowercase hex), as they were received.
        var prefixSHA256: String
    }

    /// The most chunks remembered (a transfer leaves at most one per connection); past it, an arbitrary one is
    /// forgotten, which costs only its bytes.
    static let limit = 256

    private let points = Locked<[Key: Point]>([:])

    /// Remembers that the chunk `key` has its first `point.bytes` bytes in the part.
    func record(_ key: Key, _ point: Point) {
        points.withLock { points in
            if points[key] == nil, points.count >= Self.limit, let any = points.keys.first { points[any] = nil }
            points[key] = point
        }
    }

    /// The point of `key`, forgotten here (a run that uses it records a new one if it stops again).
    func take(_ key: Key) -> Point? { points.withLock { $0.removeValue(forKey: key) } }

    /// How many chunks are remembered (for tests).
    var count: Int { points.withLock { $0.count } }

    /// Where a chunk starting at `offset` in `part` resumes: its first `point.bytes` bytes and their running hash,
    /// when they still are what was received (their digest is `point.prefixSHA256`); `nil` when the file is shorter,
    /// unreadable or different (a part deleted, or written again since).
    static func resumption(
        _ point: Point, in part: URL, at offset: Int64, fileSystem: any KioskFileSystem
    ) -> (bytes: Int64, hasher: SHA256)? {
        var hasher = SHA256()
        guard
            let read = try? FileHashing.update(
                &hasher, withContentsOf: part, range: offset..<(offset + point.bytes), fileSystem: fileSystem),
            read == point.bytes
        else { return nil }
        let copy = hasher
        return copy.finalize().hexString == point.prefixSHA256 ? (point.bytes, hasher) : nil
    }
}
