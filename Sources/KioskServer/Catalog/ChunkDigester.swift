import Crypto
import KioskCore

/// Takes bytes in order and computes their SHA-256 and their content-defined chunks with each chunk's SHA-256: what
/// the catalog computes for a file (``HashCache/hashFile(atPath:)``) and the subchunk route for a chunk
/// (``SubchunkService``).
///
/// Each byte goes through the chunker's gear hash and two SHA-256s (the whole's and its chunk's), except the first
/// chunk's bytes, whose digest is a copy of the whole's hash state finalized at the first boundary.
struct ChunkDigester {
    private var chunker: ContentDefinedChunker
    private var whole = SHA256()
    /// The hash of the current chunk, unused during the first one.
    private var chunk = SHA256()
    private var chunks: [FileChunk] = []
    /// The bytes of the current chunk taken so far.
    private var chunkLength = 0

    /// A digester cutting with `parameters`, which must be ``ChunkingParameters/isSupported``.
    init(_ parameters: ChunkingParameters) {
        // The server cuts only with its own parameters, which are supported.
        chunker = ContentDefinedChunker(parameters)!
    }

    /// Takes the next bytes.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var rest = bytes
        while !rest.isEmpty {
            let cut = chunker.nextBoundary(in: rest)
            let piece = UnsafeRawBufferPointer(rebasing: rest[..<(cut ?? rest.count)])
            whole.update(bufferPointer: piece)
            if !chunks.isEmpty { chunk.update(bufferPointer: piece) }
            chunkLength += piece.count
            guard let cut else { break }
            endChunk()
            rest = UnsafeRawBufferPointer(rebasing: rest[cut...])
        }
    }

    /// The SHA-256 of every byte taken, and the chunks, the last one ending with the bytes (none for no bytes; one,
    /// whose digest is the whole's, when no boundary was found).
    mutating func finish() -> (digest: SHA256Digest, chunks: [FileChunk]) {
        if chunkLength > 0 { endChunk() }
        return (SHA256Digest(whole.finalize()), chunks)
    }

    private mutating func endChunk() {
        let digest = chunks.isEmpty ? whole.finalize() : chunk.finalize()
        chunks.append(FileChunk(length: UInt32(chunkLength), digest: SHA256Digest(digest)))
        chunk = SHA256()
        chunkLength = 0
    }
}
