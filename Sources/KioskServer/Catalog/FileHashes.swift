import KioskCore

/// One content-defined chunk of a file as the catalog keeps it: its length and its SHA-256 as 32 bytes (its offset
/// is the sum of the lengths before it). A 1 GiB file has about a thousand.
public struct FileChunk: Sendable, Hashable {
    /// The chunk's size in bytes: at most ``ChunkingParameters/maximum`` (4 MiB), so 32 bits hold it.
    public var length: UInt32
    /// The SHA-256 of the chunk's bytes.
    public var digest: SHA256Digest

    /// Creates a chunk entry.
    public init(length: UInt32, digest: SHA256Digest) {
        self.length = length
        self.digest = digest
    }
}

/// What one read of a file computes (``HashCache/hashFile(atPath:)``): its SHA-256, and its content-defined chunks
/// cut with ``chunking``, each with its own SHA-256.
struct FileHashes: Sendable, Hashable {
    /// How every content file is cut: ``ChunkingParameters/standard``.
    static let chunking = ChunkingParameters.standard

    /// The SHA-256 of the whole file.
    var digest: SHA256Digest
    /// The chunks in file order; empty for a file of one chunk (its digest is ``digest``) or an empty file.
    var chunks: [FileChunk]
}

extension ManifestFile {
    /// The file's chunks as a grant lists them, with their offsets; nil for a file of one chunk.
    var grantChunks: [GrantChunk]? {
        guard !chunks.isEmpty else { return nil }
        var offset: Int64 = 0
        return chunks.map { chunk in
            defer { offset += Int64(chunk.length) }
            return GrantChunk(offset: offset, length: Int64(chunk.length), sha256: chunk.digest.hexString)
        }
    }
}
