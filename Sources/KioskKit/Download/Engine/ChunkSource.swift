import Crypto
import Foundation
import KioskCore

/// Where the bytes of a chunk are in the installed version of a product: a file of it, at an offset.
struct ChunkSource: Sendable, Hashable {
    /// The installed file's path, relative to the installed folder.
    var path: String
    /// Where the chunk starts in it.
    var offset: Int64
    /// The chunk's length.
    var length: Int64
}
