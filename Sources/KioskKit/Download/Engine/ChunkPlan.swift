import Crypto
import Foundation
import KioskCore

/// Which chunks of a file to fetch, and over how many connections.
enum ChunkPlan {
    /// The indexes of the chunks not yet verified, in file order.
    static func pending(chunkCount: Int, verified: Set<Int>) -> [Int] {
        (0..<chunkCount).filter { !verified.contains($0) }
    }

    /// How many chunk requests of one file run at once: at most `perFile` and the whole budget, never more than
    /// the chunks left, and at least one when any is left (`perFile` below 1 counts as 1).
    static func lanes(pending: Int, perFile: Int, budget: Int) -> Int {
        min(pending, max(1, min(perFile, budget)))
    }

    /// The most bytes one run of chunks brings: 8 MiB, or less, so that the pending bytes are shared between the
    /// `lanes` (a file of a few chunks still goes over several connections).
    static let maximumRunLength: Int64 = 8 << 20
    /// The most bytes of one request of a run: FoundationNetworking queues what the transfer has not taken yet, so
    /// each request in flight can hold this much (2 MiB requests raised the peak of a 512 MiB download from 60 to
    /// 66 MiB).
    static let requestLength: Int64 = 1 << 20

    /// The longest run for `pendingBytes` over `lanes` connections (at least 1 byte: a run holds one chunk at least).
    static func runLength(pendingBytes: Int64, lanes: Int) -> Int64 {
        max(1, min(maximumRunLength, pendingBytes / Int64(max(1, lanes))))
    }

    /// The runs that fetch the `pending` chunks (in file order): chunks next to each other in the file, one range
    /// each (sent in requests of ``requestLength``), of at most `maximumLength` bytes unless one chunk alone is
    /// longer. A chunk of `starts` (one cut short earlier, which goes on from its next byte) starts a run.
    static func runs(
        pending: [Int], chunks: [GrantChunk], maximumLength: Int64, startingRunsAt starts: Set<Int> = []
    ) -> [[Int]] {
        var runs: [[Int]] = []
        var bytes: Int64 = 0
        for index in pending {
            if let last = runs.last?.last, last == index - 1, !starts.contains(index),
                bytes + chunks[index].length <= maximumLength
            {
                runs[runs.count - 1].append(index)
                bytes += chunks[index].length
            } else {
                runs.append([index])
                bytes = chunks[index].length
            }
        }
        return runs
    }
}
