import Crypto
import Foundation
import KioskCore

/// Which chunks of an update are cut finer, and what the server's answer may hold (no I/O).
///
/// An edit inside a file changes the chunk it falls in (about 1 MiB), and an insertion the one or two after it, while
/// most of their bytes are still in the installed version. The server cuts such a chunk into subchunks of about
/// 64 KiB on request (``GrantSubchunks``); those the installed version holds are copied, and only the others are
/// fetched.
enum SubchunkPlan {
    /// How far from a verified chunk a missing one is still cut finer. Edits sit between chunks that are reused;
    /// an edit changes the chunk it falls in, and an insertion also the next few, until the boundaries line up
    /// again (normalized chunking can take several chunks to). Four chunks on each side of an edit hold those bytes
    /// in practice (in a simulation of #10's scenario over 40 contents, 4 fetched at most 4.05 % of 2.0, 2 at most
    /// 5.78 %, no limit 3.90 %), and bound what the server reads for a long run of new chunks. A file that reuses
    /// nothing (a new file) asks for nothing.
    static let reach = 4
    /// The most chunks asked for in one request (the server's limit).
    static let batchSize = 64

    /// The chunks among `pending` that lie within ``reach`` chunks of a verified one, in file order.
    static func candidates(pending: [Int], verified: Set<Int>) -> [Int] {
        guard !verified.isEmpty else { return [] }
        return pending.filter { index in
            (index - reach...index + reach).contains { verified.contains($0) }
        }
    }

    /// The subchunks of each chunk in `asked`, in that order, after checking the answer: the same chunks in the same
    /// order, cut with `chunking`, and for each, subchunks that cover the chunk exactly
    /// (``GrantValidation/validateCover(_:of:chunking:describe:)``). Anything else is
    /// ``KioskError/invalidResponse(_:)``.
    static func subchunks(
        of list: SubchunkList, asked: [Int], chunks: [GrantChunk], chunking: ChunkingParameters
    ) throws(KioskError) -> [[GrantChunk]] {
        guard list.chunking == chunking else {
            throw .invalidResponse("the subchunks were cut with other parameters than the grant announced")
        }
        guard list.chunks.map(\.index) == asked else {
            throw .invalidResponse("the subchunk answer is not for the chunks asked for")
        }
        return try list.chunks.map { (entry: ChunkSubchunks) throws(KioskError) -> [GrantChunk] in
            let chunk = chunks[entry.index]
            try GrantValidation.validateCover(
                entry.subchunks, of: chunk.offset..<(chunk.offset + chunk.length), chunking: chunking
            ) { reason in "the subchunks of chunk \(entry.index) are invalid: \(reason)" }
            return entry.subchunks
        }
    }

    /// The byte ranges (in the file) of the subchunks not in `local`, adjacent ones merged: what one chunk still
    /// needs from the server.
    static func gaps(_ subchunks: [GrantChunk], local: Set<Int>) -> [Range<Int64>] {
        var gaps: [Range<Int64>] = []
        for (position, subchunk) in subchunks.enumerated() where !local.contains(position) {
            let range = subchunk.offset..<(subchunk.offset + subchunk.length)
            if let last = gaps.last, last.upperBound == range.lowerBound {
                gaps[gaps.count - 1] = last.lowerBound..<range.upperBound
            } else {
                gaps.append(range)
            }
        }
        return gaps
    }
}
