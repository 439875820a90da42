import Foundation

/// How far a chunk in flight is verified: its first `bytes` bytes are in the part file, and `prefixSHA256` is their
/// digest as they arrived. Journaled every ``granularity`` bytes of a chunk (at most every ``minimumInterval`` per
/// connection) and when a transfer stops, so that a stopped or killed client goes on from there: the next transfer
/// reads the bytes back, checks them against the digest, and asks only for the rest (``ChunkResumePoints``). A chunk
/// is named by its offset and its own SHA-256, so a prefix never applies to other bytes than those it was taken
/// from, whatever grant comes next.
struct ChunkPrefix: Sendable, Hashable, Codable {
    /// How often a chunk's progress is journaled while it arrives: a kill loses at most this much per connection
    /// (or ``minimumInterval``'s worth on a faster one), plus what was in the socket and the journal's last write.
    static let granularity: Int64 = 256 << 10
    /// The shortest time between two progress checkpoints of one connection. Below 10 MiB/s a connection takes
    /// longer than this for ``granularity``, so every 256 KiB is journaled; a faster one journals 50 times a second
    /// instead of up to 450 (each checkpoint is a journal line to encode and write: at 450 MiB/s on loopback,
    /// one every 256 KiB cost about a fifth of `kiosk get`'s CPU time).
    static let minimumInterval: Duration = .milliseconds(20)

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

/// Paces the progress checkpoints of one connection: a report every ``ChunkPrefix/granularity`` bytes is journaled
/// unless the last one was less than ``ChunkPrefix/minimumInterval`` ago. The exact cut of a stopped transfer is
/// journaled whatever the pace.
struct ChunkProgressPace {
    private var last: ContinuousClock.Instant?

    /// Whether a progress report at `now` is journaled; if so, it becomes the last one.
    mutating func admits(at now: ContinuousClock.Instant) -> Bool {
        if let last, now - last < ChunkPrefix.minimumInterval { return false }
        last = now
        return true
    }
}
