import Foundation
import KioskCore
import Testing

@testable import KioskServer

/// Where a range of a pack falls in its files, against a byte-by-byte reference.
@Suite("Product packs")
struct ProductPackTests {
    static func files(_ lengths: [Int64]) -> [ManifestFile] {
        lengths.enumerated().map { index, length in
            ManifestFile(
                path: "Contents/f\(index)", directory: "/",
                digest: SHA256Digest(bytes: [UInt8](repeating: 0, count: 32))!,
                identity: FileIdentity(
                    size: length, modifiedNanoseconds: Int64(index) * 1_000_000_000, changedNanoseconds: 0,
                    inode: UInt64(index), device: 0))
        }
    }

    /// Every range of small packs, empty files at the start, inside and at the end included.
    @Test(arguments: [[3, 0, 5, 1], [0, 0, 4], [7], [2, 0, 0, 3, 0], [1, 1, 1, 1, 1]] as [[Int64]])
    func everyRangeMapsToTheBytesOfTheFilesItCovers(lengths: [Int64]) {
        let pack = ProductPack(files: Self.files(lengths), fileListJSON: Array("[]".utf8))
        #expect(pack.length == lengths.reduce(0, +))
        // The reference: the file and the offset in it of every byte of the pack.
        let owners: [(index: Int, offset: Int64)] = lengths.enumerated().flatMap { index, length in
            (0..<length).map { (index, $0) }
        }
        for first in 0..<pack.length {
            for last in first..<pack.length {
                let pieces = pack.pieces(of: ByteRange(first: first, last: last))
                let bytes = pieces.flatMap { piece in (piece.range.first...piece.range.last).map { (piece.index, $0) } }
                #expect(bytes.map(\.0) == owners[Int(first)...Int(last)].map(\.index))
                #expect(bytes.map(\.1) == owners[Int(first)...Int(last)].map(\.offset))
            }
        }
    }

    @Test func aRangePastTheEndIsCutAtTheEndAndOneAfterItHasNoPieces() {
        let pack = ProductPack(files: Self.files([4, 4]), fileListJSON: Array("[]".utf8))
        #expect(pack.pieces(of: ByteRange(first: 6, last: 100)).map(\.range) == [ByteRange(first: 2, last: 3)])
        #expect(pack.pieces(of: ByteRange(first: 8, last: 9)).isEmpty)
    }

    @Test func theTagFollowsTheFileListAndTheDateIsTheNewestFile() {
        let files = Self.files([1, 2, 3])
        let one = ProductPack(files: files, fileListJSON: Array("[1]".utf8))
        #expect(one.entityTag == ProductPack(files: files, fileListJSON: Array("[1]".utf8)).entityTag)
        #expect(one.entityTag != ProductPack(files: files, fileListJSON: Array("[2]".utf8)).entityTag)
        #expect(one.entityTag.opaqueTag.hasPrefix("pack-"))
        #expect(one.lastModified == Date(timeIntervalSince1970: 2))
        #expect(one.offsets == [0, 1, 3, 6])
    }
}
