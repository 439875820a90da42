import Foundation
import KioskCore

/// What KioskKit accepts from a server's grant. Every value a server controls is capped, so that a hostile or broken
/// server cannot make the client trap, fill the disk's bookkeeping or trust a token for ever.
public struct GrantLimits: Sendable, Hashable {
    /// The most files one grant may list (default 50,000: two and a half times a 20,000-file product).
    public var maximumFileCount: Int
    /// The largest `total_length` a grant may announce, in bytes (default 1 TiB).
    public var maximumTotalLength: Int64
    /// The most chunks one grant may list, all files together (default 2,097,152: a 2 TiB product at the standard
    /// 1 MiB average chunk).
    public var maximumChunkCount: Int

    /// The longest file path a grant may list, in UTF-8 bytes: 1024, with at most 255 bytes per component, so that
    /// every path fits the file system under the cache root.
    public static let maximumPathLength = 1024
    /// The longest presigned URL a grant may give a file (`GrantFile.presignedURL`), in UTF-8 bytes: a SigV4 URL
    /// with a session token and a long key is about 2 KiB.
    public static let maximumPresignedURLLength = 8192
    /// How long a grant is trusted after it was received, whatever its `expires_at`: 24 hours. A journaled grant
    /// older than that is renewed before it is used.
    public static let maximumTrust: TimeInterval = 24 * 3600

    /// The chunking a grant may announce, for its chunks (`chunking`) and for their subchunks
    /// (`subchunks.chunking`) alike, when it names an algorithm KioskKit cuts with: no `minimum` under 16 KiB, no
    /// `average` under 64 KiB and no `maximum` over 16 MiB (the server's are 256 KiB / 1 MiB / 4 MiB for chunks and
    /// 16 KiB / 64 KiB / 256 KiB for subchunks). An update holds one chunk in memory while it puts it together, and
    /// cuts the installed version into an index of about 100 bytes a chunk, so finer cuts or longer chunks would
    /// let a server make the app allocate without bound.
    public static let chunkingBounds = ChunkingBounds(
        smallestMinimum: 16 << 10, smallestAverage: 64 << 10, largestMaximum: 16 << 20)

    /// Creates limits; the defaults suit products of up to tens of thousands of files and hundreds of GiB.
    public init(maximumFileCount: Int = 50_000, maximumTotalLength: Int64 = 1 << 40, maximumChunkCount: Int = 1 << 21) {
        self.maximumFileCount = maximumFileCount
        self.maximumTotalLength = maximumTotalLength
        self.maximumChunkCount = maximumChunkCount
    }
}
