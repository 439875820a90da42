import Crypto
import Foundation
import KioskCore
import Testing

@testable import KioskKit

/// Which files come from a grant's pack, and how a pack range is split into files.
@Suite("Pack runs")
struct PackFetchTests {
    static func file(_ index: Int, length: Int64, chunks: [GrantChunk]? = nil) -> GrantFile {
        GrantFile(
            path: "Contents/f\(index)", length: length, sha256: String(repeating: "0", count: 64), url: "/x",
            chunks: chunks)
    }

    static func grant(_ files: [GrantFile], pack: GrantPack?) -> Grant {
        Grant(
            productID: "com.example.p", contentVersion: "1", totalLength: files.reduce(0) { $0 + $1.length },
            expiresAt: Date(), token: "t", files: files, pack: pack)
    }

    @Test func onlyThePackOfTheGrantsOwnVersionAndLengthIsUsed() {
        let files = (0..<3).map { Self.file($0, length: 10) }
        let good = GrantPack(url: "/v1/packs/com.example.p/1", length: 30)
        #expect(PackPlan.path(of: Self.grant(files, pack: good)) == "/v1/packs/com.example.p/1")
        #expect(PackPlan.path(of: Self.grant(files, pack: nil)) == nil)
        for bad in [
            GrantPack(url: "/v1/packs/com.example.p/2", length: 30),
            GrantPack(url: "/v1/packs/com.example.other/1", length: 30),
            GrantPack(url: "https://elsewhere.example/v1/packs/com.example.p/1", length: 30),
            GrantPack(url: "/v1/packs/com.example.p/1", length: 31),
        ] {
            #expect(PackPlan.path(of: Self.grant(files, pack: bad)) == nil, "\(bad)")
        }
        #expect(PackPlan.path(of: Self.grant([Self.file(0, length: 30)], pack: good)) == nil)
    }

    @Test func runsAreConsecutivePackableFilesWithinTheBounds() {
        let files = (0..<1_200).map { Self.file($0, length: $0 == 5 ? PackPlan.maximumFileLength + 1 : 100) }
        let packable = { (file: GrantFile) in file.length <= PackPlan.maximumFileLength }
        #expect(PackPlan.run(from: 0, in: files, isPackable: packable) == 0..<5)
        #expect(PackPlan.run(from: 5, in: files, isPackable: packable) == nil)
        #expect(PackPlan.run(from: 6, in: files, isPackable: packable) == 6..<(6 + PackPlan.maximumRunFiles))
        #expect(PackPlan.run(from: 1_198, in: files, isPackable: packable) == 1_198..<1_200)
        #expect(PackPlan.run(from: 1_199, in: files, isPackable: packable) == nil)
        // Bytes: a run stops before the file that would pass the bound (a first file is always taken).
        let big = (0..<20).map { Self.file($0, length: 200 << 10) }
        let run = PackPlan.run(from: 0, in: big, isPackable: { _ in true })
        #expect(run == 0..<Int(PackPlan.maximumRunLength / (200 << 10)))
        #expect(PackPlan.offsets(of: Array(big.prefix(3))) == [0, 200 << 10, 400 << 10, 600 << 10])
    }

    /// A splitter writing into part files in a fresh folder.
    final class Fixture: Sendable {
        let folder: URL
        let files: [GrantFile]
        let parts: [URL]
        let completed: Locked<[(Int, String)]>
        let splitter: SegmentSplitter

        init(lengths: [Int64], start: Int64 = 1_000) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("pack-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let files = lengths.enumerated().map { PackFetchTests.file($0, length: $1) }
            let folder = self.folder
            let parts = files.indices.map { folder.appendingPathComponent("\($0).part") }
            let completed = Locked<[(Int, String)]>([])
            self.files = files
            self.parts = parts
            self.completed = completed
            splitter = SegmentSplitter(
                lengths: lengths, start: start,
                open: { index throws(KioskError) in try POSIXPartFileWriter(url: parts[index], truncatingTo: 0) },
                written: { _ in }, completed: { index, digest in completed.withLock { $0.append((index, digest)) } })
        }

        deinit { try? FileManager.default.removeItem(at: folder) }

        func write(_ bytes: [UInt8], at offset: Int64) throws {
            let splitter = self.splitter
            try bytes.withUnsafeBytes { buffer in try splitter.write(buffer, at: offset) }
        }
    }

    @Test func aRangeIsSplitIntoItsFilesInOrderWhateverTheWriteSizes() throws {
        let lengths: [Int64] = [0, 5, 0, 0, 7, 1, 0]
        var random = SplitMix64(seed: 7)
        let bytes = random.bytes(13)
        for step in [1, 2, 3, 5, 13] {
            let fixture = try Fixture(lengths: lengths)
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + step)
                try fixture.write(Array(bytes[offset..<end]), at: 1_000 + Int64(offset))
                offset = end
            }
            #expect(fixture.splitter.finish().allSatisfy { $0 != nil })
            var start = 0
            for (index, length) in lengths.enumerated() {
                let expected = Array(bytes[start..<(start + Int(length))])
                start += Int(length)
                #expect(try Data(contentsOf: fixture.parts[index]) == Data(expected), "step \(step), file \(index)")
            }
            let reported = fixture.completed.withLock { $0 }
            #expect(reported.map(\.0) == Array(lengths.indices), "step \(step)")
            var hashStart = 0
            for (index, digest) in reported {
                let slice = bytes[hashStart..<(hashStart + Int(lengths[index]))]
                hashStart += Int(lengths[index])
                #expect(digest == SHA256.hash(data: Array(slice)).hexString)
            }
        }
    }

    @Test func aCutShortRangeReportsOnlyTheFilesItCompleted() throws {
        let fixture = try Fixture(lengths: [4, 4, 4])
        try fixture.write([1, 2, 3, 4, 5, 6], at: 1_000)
        #expect(fixture.splitter.finish().map { $0 != nil } == [true, false, false])
        #expect(fixture.completed.withLock { $0.map(\.0) } == [0])
    }

    @Test func bytesOutOfOrderOrPastTheRunAreRefused() throws {
        let fixture = try Fixture(lengths: [4, 4])
        try fixture.write([1, 2], at: 1_000)
        #expect(throws: KioskError.self) { try fixture.write([3], at: 1_005) }
        let past = try Fixture(lengths: [2, 2])
        #expect(throws: KioskError.self) { try past.write([1, 2, 3, 4, 5], at: 1_000) }
    }
}
