import Crypto
import Foundation
import KioskCore

/// A product version's pack (``GrantPack``): its files' bytes one after the other, in grant order, served as one
/// resource. Made once per version with its file list (``GrantFileList``): where each file starts, and the pack's
/// validators.
struct ProductPack: Sendable {
    /// Where each file starts in the pack, in file order, then the pack's length: one more value than files.
    let offsets: [Int64]
    /// Strong, and the same on every instance serving the same files: the SHA-256 of the version's file list (each
    /// file's path, length, SHA-256 and chunks, in pack order), so that any change of a byte or of the order
    /// changes it.
    let entityTag: EntityTag
    /// The newest modification time of the files (`Last-Modified`).
    let lastModified: Date

    /// The pack's length in bytes.
    var length: Int64 { offsets.last ?? 0 }

    /// The pack of `files`, whose grant entries encode as `fileListJSON`.
    init(files: [ManifestFile], fileListJSON: some Collection<UInt8>) {
        self.offsets = GrantPack.offsets(of: files.lazy.map(\.length))
        let digest = SHA256.hash(data: Array(fileListJSON))
        // "pack-" and hex digits: always a valid opaque tag.
        self.entityTag = EntityTag(opaqueTag: "pack-" + SHA256Digest(digest).hexString)!
        self.lastModified = files.map(\.lastModified).max() ?? Date(timeIntervalSince1970: 0)
    }

    /// The pieces of `range` (of the pack) in each file it covers, in order: the file's index and the range within
    /// that file. Empty files inside the range contribute nothing. O(log files + pieces).
    func pieces(of range: ByteRange) -> [(index: Int, range: ByteRange)] {
        guard range.first < length else { return [] }
        // The last file starting at or before `range.first`, skipping empty files (they start where the next one
        // does).
        var low = 0
        var high = offsets.count - 2
        while low < high {
            let middle = (low + high + 1) / 2
            if offsets[middle] <= range.first { low = middle } else { high = middle - 1 }
        }
        var pieces: [(index: Int, range: ByteRange)] = []
        var index = low
        let end = min(range.last, length - 1)
        while index < offsets.count - 1, offsets[index] <= end {
            let start = offsets[index]
            let fileEnd = offsets[index + 1] - 1
            if fileEnd >= start {
                let first = max(range.first, start) - start
                let last = min(end, fileEnd) - start
                if first <= last { pieces.append((index, ByteRange(first: first, last: last))) }
            }
            index += 1
        }
        return pieces
    }
}
