import Crypto
import Foundation
import KioskCore

/// What one file's fetch starts from: a copy of the few values of the download it needs, so that files in flight
/// share nothing mutable with the engine.
struct FileJob: Sendable {
    var file: GrantFile
    var grant: Grant
    var grantReceivedAt: Date?
    var productID: String
    /// The validator kept for the file's `If-Range`.
    var entityTag: String?
    /// The size of the file under its final name in staging, if the run's listing found it there.
    var finalSize: Int64?
    /// The size of its part file (0 when there is none).
    var partSize: Int64
    /// The chunks of the file journaled as verified in its part, by index.
    var verifiedChunks: Set<Int> = []
    /// Their bytes (already counted in the download's verified bytes).
    var verifiedChunkBytes: Int64 = 0
    /// The transfer's hash failures, shared by its files.
    var integrity: Locked<IntegrityCounts>
    /// How far its chunks in flight were verified when the journal last said so (``ChunkPrefix``).
    var chunkPrefixes: [ChunkPrefix] = []
}

/// How one file's fetch ended.
struct FileOutcome: Sendable {
    var file: GrantFile
    /// What the fetch changed, in order (the journal already has those it had to keep).
    var changes: [DownloadChange] = []
    /// Why the fetch stopped; `nil` when the file is verified.
    var stop: Stop?

    /// Why a file's fetch stopped before the file was verified.
    enum Stop: Sendable {
        /// The transfer needs a new grant for the file to go on.
        case needsNewGrant(GrantNeed)
        /// The fetch failed.
        case failed(any Error)

        /// The stop for a thrown error: a refusal of the grant's token (expired, or the version gone) is a need of a
        /// new grant, which keeps every byte still valid (``GrantRenewal``).
        init(_ error: any Error) {
            if let error = error as? KioskError, error.needsNewGrant {
                self = .needsNewGrant(.refused(error))
            } else {
                self = .failed(error)
            }
        }
    }
}
