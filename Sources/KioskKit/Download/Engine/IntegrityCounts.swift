import Foundation

/// How many times each file and each chunk of a transfer failed its hash, and what a failure leads to: the first
/// failure of a file or a chunk is fetched again (a file after a new grant: it may have changed on the server), the
/// second ends the transfer with an integrity error naming the file.
///
/// A file's count is journaled (``DownloadChange/integrityFailures(path:count:)``): it survives a relaunch, and starts
/// over once the file is verified, discarded or dropped by a new grant. A chunk's lasts the transfer, as a chunk
/// is fetched again on its own. A value with no I/O; the engine shares one per transfer behind a lock.
struct IntegrityCounts: Sendable, Hashable {
    /// How many times the same file, or the same chunk, may fail its hash.
    static let failuresAllowed = 2

    /// What a failure leads to.
    struct Outcome: Sendable, Hashable {
        /// The change to journal (a file's new count; `nil` for a chunk).
        var change: DownloadChange?
        /// The error to end the transfer with, at the limit; `nil`: fetch the bytes again.
        var error: KioskError?
    }

    private var files: [String: Int]
    private var chunks: [String: [Int: Int]] = [:]

    /// Counts that start from the journaled counts of the download's files.
    init(files: [String: Int] = [:]) { self.files = files }

    /// Counts one failure of `productID`'s bytes. At the limit the count starts over (a resume of the failed download
    /// gets one retry again).
    mutating func count(_ failure: IntegrityFailure, productID: String) -> Outcome {
        var outcome = Outcome()
        let count: Int
        if let chunk = failure.chunk {
            count = (chunks[failure.path]?[chunk] ?? 0) + 1
            chunks[failure.path, default: [:]][chunk] = count < Self.failuresAllowed ? count : nil
        } else {
            count = (files[failure.path] ?? 0) + 1
            files[failure.path] = count < Self.failuresAllowed ? count : 0
            outcome.change = .integrityFailures(path: failure.path, count: files[failure.path])
        }
        if count >= Self.failuresAllowed {
            outcome.error = .integrity(
                productID: productID, path: failure.path, expectedSHA256: failure.expectedSHA256,
                actualSHA256: failure.actualSHA256)
        }
        return outcome
    }
}
