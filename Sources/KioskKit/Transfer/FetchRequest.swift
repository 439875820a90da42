import Crypto
import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One ranged GET of one content file into its `.part` file.
struct FetchRequest: Sendable {
    /// The absolute content URL.
    var url: URL
    /// The grant token (sent as `Authorization: Bearer`; never logged); nil for a presigned URL, which gets no
    /// `Authorization` and no `If-Range`, and whose `ETag` is not kept (``ContentSource``).
    var token: String?
    /// Bytes already in the part file: the request asks for `bytes=<offset>-`.
    var offset: Int64
    /// The file's length according to the grant.
    var expectedLength: Int64
    /// The validator for `If-Range`, if one was seen.
    var entityTag: String?
    /// The `.part` file.
    var partURL: URL
    /// Where the range to fetch ends (exclusive) for one chunk of a file fetched by chunks; `nil` for the rest of
    /// the file.
    var end: Int64? = nil

    /// The end of the range to fetch (exclusive).
    var rangeEnd: Int64 { end ?? expectedLength }
}

extension FetchRequest {
    /// A request for the bytes of `source` into `partURL`, from `offset` to `end` (nil: the end of the file);
    /// `entityTag` is dropped for a presigned source.
    init(
        source: ContentSource, offset: Int64, expectedLength: Int64, entityTag: String?, partURL: URL,
        end: Int64? = nil
    ) {
        url = source.url
        token = source.token
        self.offset = offset
        self.expectedLength = expectedLength
        self.entityTag = source.isPresigned ? nil : entityTag
        self.partURL = partURL
        self.end = end
    }
}

/// What a completed fetch left on disk.
struct FetchOutcome: Sendable {
    /// The lowercase hex SHA-256 of the whole part file.
    var sha256: String
    /// The response's `ETag`.
    var entityTag: String?
    /// The part file, still open and not yet fsynced: the journal's group commit makes it durable (and closes it)
    /// before it records the file as verified.
    var unsynced: UnsyncedFile
}
