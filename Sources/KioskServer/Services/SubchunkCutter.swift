import KioskCore
import NIOPosix

/// Cuts chunks of an open content file into subchunks, with no HTTP: each chunk is read from the file, cut by
/// content with ``SubchunkService/chunking`` from its first byte as if it were a file of its own, and each subchunk
/// hashed with SHA-256.
///
/// Chunks are read on the thread pool, one after the other for a request, in reads of ``readSize`` bytes: a cut
/// holds one such buffer, whatever the chunk's size. Each chunk's bytes are hashed as a whole too and checked against
/// the digest the catalog computed, so a file changed in place behind the catalog is refused
/// (``ContentRefusal/fileChanging(productID:path:)``) rather than described wrongly.
///
/// The work is bounded three ways: a chunk once cut is remembered by its digest (``SubchunkCache``) and not read
/// again; a chunk being cut is cut once for every request that asks for it meanwhile (``ChunkCutFlights``); and each
/// token and purchase may have only so many chunks being cut at once (``SubchunkWorkBounds``). Every cut is counted
/// in the metrics (bytes read, chunks cut).
struct SubchunkCutter: Sendable {
    /// The size of each read of a chunk's bytes.
    static let readSize = 256 << 10

    /// The chunks already cut.
    var cache = SubchunkCache()
    /// The chunks being cut.
    var flights = ChunkCutFlights()
    /// The chunks each token and purchase may have being cut.
    var bounds = SubchunkWorkBounds()
    /// Counts the bytes read and the chunks cut.
    var metrics = ServerMetrics()

    /// The subchunks of chunks `indexes` of an open file, in that order, for a request of the token with `claims`:
    /// those cut before from the cache, the others cut (or awaited from a request cutting them now).
    ///
    /// Throws a ``SubchunkRefusal`` for an index outside the file's chunks, a ``SubchunkBusyRefusal`` when the
    /// token or its purchase has too many chunks being cut, a ``ContentRefusal`` for a file changed on disk, or the
    /// error of reading the file.
    func subchunks(of file: OpenContentFile, chunks indexes: [Int], for claims: GrantClaims) async throws
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
        let keys = indexes.map {
            ChunkCutFlights.Key(path: file.file.absolutePath, offset: offsets[$0], digest: chunks[$0].digest)
        }
        let admission = try bounds.admit(Set(keys.filter { cache.subchunks(of: $0.digest) == nil }), for: claims)
        defer { bounds.release(admission) }
        var answer: [ChunkSubchunks] = []
        answer.reserveCapacity(indexes.count)
        for (index, key) in zip(indexes, keys) {
            let chunk = chunks[index]
            let cut = try await flights.subchunks(of: key, cache: cache) { [metrics] in
                let subchunks = try await NIOThreadPool.singleton.runIfActive {
                    try Self.cut(chunk, at: key.offset, of: file)
                }
                metrics.countChunkCut(bytes: Int(chunk.length))
                return subchunks
            }
            var position = key.offset
            let subchunks = cut.map { subchunk in
                defer { position += Int64(subchunk.length) }
                return GrantChunk(offset: position, length: Int64(subchunk.length), sha256: subchunk.digest.hexString)
            }
            answer.append(ChunkSubchunks(index: index, subchunks: subchunks))
        }
        return SubchunkList(chunking: SubchunkService.chunking, chunks: answer)
    }

    /// Reads `chunk`, which starts at `offset` in `file`, and cuts it with ``SubchunkService/chunking``
    /// (``ChunkDigester``); throws ``ContentRefusal/fileChanging(productID:path:)`` when its bytes are not those the
    /// catalog hashed. Blocking: call it on a thread that may block.
    private static func cut(_ chunk: FileChunk, at offset: Int64, of file: OpenContentFile) throws -> [FileChunk] {
        let changed = ContentRefusal.fileChanging(productID: file.productID, path: file.file.path)
        let end = offset + Int64(chunk.length)
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: min(readSize, Int(chunk.length)), alignment: 64)
        defer { buffer.deallocate() }
        var digester = ChunkDigester(SubchunkService.chunking)
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
