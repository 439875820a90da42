import KioskCore

/// Why ``SubchunkService`` does not cut the chunks a request lists: all `bad_request`. Refusals of the token or the
/// file are ``ContentRefusal``s, as for content.
public enum SubchunkRefusal: Error, Sendable, Hashable {
    /// The query has no `chunks`, an empty one, or several.
    case chunkListMissing
    /// An entry of `chunks` is not 1 to 9 decimal digits.
    case malformedChunkIndex(String)
    /// `chunks` lists more indexes than ``SubchunkService/maximumChunks``.
    case tooManyChunks(Int)
    /// `chunks` lists an index twice.
    case duplicateChunk(Int)
    /// The file is one chunk: the grant lists no chunks for it.
    case noChunks(path: String)
    /// An index is not below the file's number of chunks.
    case chunkOutOfRange(index: Int, count: Int)
}

extension SubchunkRefusal: APIResponseError {
    /// `bad_request`: the request is wrong whatever the server's state.
    public var errorCode: APIErrorCode { .badRequest }

    /// What is wrong with the list, and what a valid one is.
    public var message: String {
        switch self {
        case .chunkListMissing:
            "A subchunk request lists the chunks to cut once: ?chunks=<index>,<index>,… with 1 to "
                + "\(SubchunkService.maximumChunks) indexes into the file's chunks in the grant."
        case .malformedChunkIndex(let entry):
            "'\(entry.prefix(32))' is not a chunk index: the chunks query lists decimal indexes (digits only) "
                + "separated by commas, e.g. ?chunks=0,3,4."
        case .tooManyChunks(let count):
            "The request lists \(count) chunks; at most \(SubchunkService.maximumChunks) are cut per request."
        case .duplicateChunk(let index): "The chunks query lists chunk \(index) twice."
        case .noChunks(let path):
            "The file '\(path)' has no chunks (it is one chunk): fetch it whole, or by ranges of its content URL."
        case .chunkOutOfRange(let index, let count):
            "There is no chunk \(index): the file has \(count) chunks, 0 to \(count - 1)."
        }
    }
}
