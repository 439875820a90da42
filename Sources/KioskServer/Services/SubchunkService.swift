import KioskCore
import NIOPosix

/// Cuts chunks of a content file finer, on request, with no HTTP (``GrantSubchunks``): each chunk the request lists
/// is read from the open file, cut by content with ``chunking`` from its first byte as if it were a file of its own,
/// and each subchunk hashed with SHA-256.
///
/// The file is admitted and opened as for content (``ContentAccess``). Its chunks are read on the thread pool, one
/// after the other, in reads of ``readSize`` bytes: a request holds one such buffer at a time, whatever the chunks'
/// sizes. Each chunk's bytes are hashed as a whole too and checked against the digest the catalog computed, so a
/// file changed in place behind the catalog is refused (``ContentRefusal/fileChanging(productID:path:)``) rather than
/// described wrongly. A chunk once cut is remembered by its digest (``SubchunkCache``) and not read again.
struct SubchunkService: Sendable {
    /// How chunks are cut: ``ChunkingParameters/subchunks`` (16 KiB / 64 KiB / 256 KiB).
    static let chunking = ChunkingParameters.subchunks
    /// The most chunks one request may list: 64 chunks of at most 4 MiB, 256 MiB read and hashed at most.
    static let maximumChunks = 64
    /// The size of each read of a chunk's bytes.
    static let readSize = 256 << 10

    /// Admits the requests and opens the files.
    let access: ContentAccess
    /// The chunks already cut.
    let cache: SubchunkCache

    /// The subchunks of the chunks of the file at `path` that `query` lists, in the order listed, if `claims` open
    /// the file: `query` holds the values of the request's `chunks` parameters (one is expected).
    ///
    /// Throws a ``SubchunkRefusal`` for a list that is not valid or does not fit the file, a ``ContentRefusal`` for
    /// a file the token does not open or that changed on disk, or the error of reading the file.
    func subchunks(of path: ContentPath, chunks query: [String], for claims: GrantClaims) async throws
        -> SubchunkList
    {
        let indexes = try Self.chunkIndexes(query)
        let file = try await access.file(at: path, for: claims)
        return try await Self.subchunks(of: file, chunks: indexes, cache: cache)
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

    /// The subchunks of chunks `indexes` of an open file, in that order: those `cache` holds from it, the others
    /// read, cut and stored in it.
    static func subchunks(of file: OpenContentFile, chunks indexes: [Int], cache: SubchunkCache) async throws
        -> SubchunkList
    {
        let chunks = file.file.chunks
        guard !chunks.isEmpty else { throw SubchunkRefusal.noChunks(path: file.file.path) }
        if let outside = indexes.first(where: { $0 >= chunks.count }) {
            throw SubchunkRefusal.chunkOutOfRange(index: outside, count: chunks.count)
        }
        var offsets: [Int64] = []
        offsets.reserveCapacity(chunks.count)
        var position: Int64 = 0
        for chunk in chunks {
            offsets.append(position)
            position += Int64(chunk.length)
        }
        var answer: [ChunkSubchunks] = []
        answer.reserveCapacity(indexes.count)
        for index in indexes {
            let (chunk, offset) = (chunks[index], offsets[index])
            var cut = cache.subchunks(of: chunk.digest)
            if cut == nil {
                let read = try await NIOThreadPool.singleton.runIfActive { try Self.cut(chunk, at: offset, of: file) }
                cache.store(read, of: chunk.digest)
                cut = read
            }
            var position = offset
            let subchunks = (cut ?? []).map { subchunk in
                defer { position += Int64(subchunk.length) }
                return GrantChunk(offset: position, length: Int64(subchunk.length), sha256: subchunk.digest.hexString)
            }
            answer.append(ChunkSubchunks(index: index, subchunks: subchunks))
        }
        return SubchunkList(chunking: chunking, chunks: answer)
    }

    /// Reads `chunk`, which starts at `offset` in `file`, and cuts it with ``chunking`` (``ChunkDigester``); throws
    /// ``ContentRefusal/fileChanging(productID:path:)`` when its bytes are not those the catalog hashed. Blocking:
    /// call it on a thread that may block.
    private static func cut(_ chunk: FileChunk, at offset: Int64, of file: OpenContentFile) throws -> [FileChunk] {
        let changed = ContentRefusal.fileChanging(productID: file.productID, path: file.file.path)
        let end = offset + Int64(chunk.length)
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: min(readSize, Int(chunk.length)), alignment: 64)
        defer { buffer.deallocate() }
        var digester = ChunkDigester(chunking)
        var position = offset
        while position < end {
            let wanted = UnsafeMutableRawBufferPointer(rebasing: buffer[..<min(buffer.count, Int(end - position))])
            let count = try file.read(into: wanted, at: position)
            // The file is shorter than the catalog says.
            guard count == wanted.count else { throw changed }
            digester.update(UnsafeRawBufferPointer(wanted))
            position += Int64(count)
        }
        let (digest, subchunks) = digester.finish()
        guard digest == chunk.digest else { throw changed }
        return subchunks
    }
}
