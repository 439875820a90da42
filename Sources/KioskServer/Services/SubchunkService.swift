import KioskCore

/// Cuts chunks of a content file finer, on request, with no HTTP (``GrantSubchunks``): checks the request's list of
/// chunks, admits the request and opens the file as for content (``ContentAccess``), and has the chunks cut by
/// ``SubchunkCutter``, which bounds the work (a cache, one cut per chunk in flight, bounds per token and purchase).
struct SubchunkService: Sendable {
    /// How chunks are cut: ``ChunkingParameters/subchunks`` (16 KiB / 64 KiB / 256 KiB).
    static let chunking = ChunkingParameters.subchunks
    /// The most chunks one request may list: 64 chunks of at most 4 MiB, 256 MiB read and hashed at most.
    static let maximumChunks = 64

    /// Admits the requests and opens the files.
    let access: ContentAccess
    /// Cuts the chunks.
    let cutter: SubchunkCutter

    /// The subchunks of the chunks of the file at `path` that `query` lists, in the order listed, if `claims` open
    /// the file: `query` holds the values of the request's `chunks` parameters (one is expected).
    ///
    /// Throws a ``SubchunkRefusal`` for a list that is not valid or does not fit the file, a ``ContentRefusal`` for
    /// a file the token does not open or that changed on disk, a ``SubchunkBusyRefusal`` when the token or its
    /// purchase has too many chunks being cut, or the error of reading the file.
    func subchunks(of path: ContentPath, chunks query: [String], for claims: GrantClaims) async throws
        -> SubchunkList
    {
        let indexes = try Self.chunkIndexes(query)
        let file = try await access.file(at: path, for: claims)
        return try await cutter.subchunks(of: file, chunks: indexes, for: claims)
    }

    /// The indexes of a `chunks` query: one value of 1 to ``maximumChunks`` distinct decimal indexes separated by
    /// commas, with no sign, space or empty entry.
    static func chunkIndexes(_ query: [String]) throws(SubchunkRefusal) -> [Int] {
        guard query.count == 1, let list = query.first, !list.isEmpty else { throw .chunkListMissing }
        let entries = list.split(separator: ",", omittingEmptySubsequences: false)
        guard entries.count <= maximumChunks else { throw .tooManyChunks(entries.count) }
        var indexes: [Int] = []
        var seen = Set<Int>()
        for entry in entries {
            // At most 9 digits: no file has a billion chunks, and the value always fits.
            guard (1...9).contains(entry.utf8.count),
                entry.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                let index = Int(entry)
            else { throw .malformedChunkIndex(String(entry)) }
            guard seen.insert(index).inserted else { throw .duplicateChunk(index) }
            indexes.append(index)
        }
        return indexes
    }
}
