import Foundation

/// How far a chunk in flight is verified: its first `bytes` bytes are in the part file, and `prefixSHA256` is their
/// digest as they arrived. Journaled every ``granularity`` bytes of a chunk and when a transfer stops, so that a
/// stopped or killed client goes on from there: the next transfer reads the bytes back, checks them against the
/// digest, and asks only for the rest (``ChunkResumePoints``). A chunk is named by its offset and its own SHA-256,
/// so a prefix never applies to other bytes than those it was taken from, whatever grant comes next.
struct ChunkPrefix: Sendable, Hashable, Codable {
    /// How often a chunk's progress is journaled while it arrives: a kill loses at most this much per connection,
    /// plus what was in the socket and the journal's last group commit.
    static let granularity: Int64 = 256 << 10

    /// The chunk's index in the file's chunk list.
    var index: Int
    /// Where the chunk starts in the file.
    var offset: Int64
    /// The chunk's SHA-256 in the grant (lowercase hex).
    var sha256: String
    /// How many of its first bytes are in the part (more than 0, fewer than the chunk's length).
    var bytes: Int64
    /// The SHA-256 of those bytes (lowercase hex), as they were received.
    var prefixSHA256: String

    /// The resume point this prefix stands for.
    var point: ChunkResumePoints.Point { ChunkResumePoints.Point(bytes: bytes, prefixSHA256: prefixSHA256) }
}
