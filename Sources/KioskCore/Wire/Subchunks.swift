/// Where a grant's chunks are cut finer: `GET <url>/<file path>?chunks=<index>,<index>,…` with the grant's token
/// answers a ``SubchunkList``. A client updating a product asks for the chunks it lacks, finds the subchunks it
/// already holds in the installed version, and fetches only the others: an edit then costs tens of KiB around it
/// instead of the megabyte chunk it falls in.
public struct GrantSubchunks: Codable, Sendable, Hashable {
    /// The version's subchunk resource, e.g. `/v1/subchunks/<product_id>/<content_version>`; a file's is this
    /// followed by `/` and the file's path (percent-encoded as in its ``GrantFile/url``).
    public var url: String
    /// How each chunk is cut: from the chunk's first byte, as if it were a file of its own.
    public var chunking: ChunkingParameters

    /// Subchunks at `url`, cut with `chunking`.
    public init(url: String, chunking: ChunkingParameters) {
        self.url = url
        self.chunking = chunking
    }
}

/// The answer to a subchunk request: the requested chunks of one file, each cut by content from its first byte.
public struct SubchunkList: Codable, Sendable, Hashable {
    /// How the chunks were cut (the grant's ``GrantSubchunks/chunking``).
    public var chunking: ChunkingParameters
    /// The requested chunks, in the order asked.
    public var chunks: [ChunkSubchunks]

    /// A list of `chunks` cut with `chunking`.
    public init(chunking: ChunkingParameters, chunks: [ChunkSubchunks]) {
        self.chunking = chunking
        self.chunks = chunks
    }
}

/// One chunk of a file cut finer: its ``subchunks`` cover it exactly, in order, with offsets in the file.
public struct ChunkSubchunks: Codable, Sendable, Hashable {
    /// The chunk's index in the file's ``GrantFile/chunks``.
    public var index: Int
    /// Its subchunks: offsets in the file, from the chunk's offset to its end.
    public var subchunks: [GrantChunk]

    /// The subchunks of chunk `index`.
    public init(index: Int, subchunks: [GrantChunk]) {
        self.index = index
        self.subchunks = subchunks
    }
}
