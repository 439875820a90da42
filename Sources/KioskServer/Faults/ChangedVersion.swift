import Crypto
import Foundation
import KioskCore
import NIOCore
import NIOPosix

/// The version of a file that the fault `changed` answers with, as if the file had been replaced on the server:
/// every byte XOR ``mask`` (the same at every position, so any range of the changed version is that range of the
/// file transformed, and bytes stitched from both versions are neither), a strong `ETag` of its own (its SHA-256
/// when the route knows it, as a content file's is; the file's tag with ``tagSuffix`` otherwise, for a pack), a
/// `Last-Modified` ``lastModifiedShift`` later, and a `Repr-Digest` of its own.
enum ChangedVersion {
    /// What every byte is XORed with.
    static let mask: UInt8 = 0x5A
    /// How much later than the file the changed version was modified.
    static let lastModifiedShift: TimeInterval = 86_400
    /// Added to the `ETag` of a representation whose changed digest is not known (a pack's, which has no
    /// `Repr-Digest`): `-`, `c`, `h`… are valid entity-tag characters.
    static let tagSuffix = "-changed"

    /// Turns `bytes` of the file into the same bytes of the changed version, in place (and back: XOR is its own
    /// inverse).
    static func transform(_ bytes: UnsafeMutableRawBufferPointer) {
        for index in bytes.indices { bytes[index] ^= mask }
    }

    /// Turns the readable bytes of `buffer` into the changed version's, in place.
    static func transform(_ buffer: inout ByteBuffer) {
        buffer.withUnsafeMutableReadableBytes { transform($0) }
    }
}

/// The SHA-256 of the changed version (``ChangedVersion``) of each file answered under `changed`, once per version
/// of the file (``FileVersionDigests``), on the thread pool.
struct ChangedDigests: Sendable {
    private let digests = FileVersionDigests()

    /// The SHA-256 of the changed version of `file`, the version it was opened at.
    /// - Throws: a `not_ready` ``APIError`` when the file changed while it was being read.
    func digest(of file: OpenContentFile) async throws -> SHA256Digest {
        try await digests.digest(of: file.path, identity: file.file.identity) {
            try await FileVersionDigests.sha256(
                of: file.descriptor, identity: file.file.identity, length: file.file.length,
                transform: ChangedVersion.transform)
        }
    }
}
