import Crypto
import Foundation
import KioskCore
import Testing

@testable import KioskKit

/// #10: the chunks of an update cut finer (``SubchunkPlan``, ``ChunkIndex/build(ranges:in:parameters:fileSystem:)``,
/// ``GrantValidation/subchunkPath(of:in:)``), on small inputs.
@Suite("Update subchunks")
struct UpdateSubchunksTests {
    typealias Seeding = UpdateSeedingTests

    /// Chunks of about 4 KiB, subchunks of about 256 bytes: the standard 1 MiB and 64 KiB, 256 times smaller.
    static let chunking = ChunkingParameters(minimum: 1024, average: 4096, maximum: 16384)
    static let subchunking = ChunkingParameters(minimum: 64, average: 256, maximum: 1024)

    /// The chunks of `data` (or of `data[range]`, with offsets in `data`) cut with `parameters`.
    static func cut(_ data: Data, _ range: Range<Int>? = nil, _ parameters: ChunkingParameters) -> [GrantChunk] {
        let range = range ?? data.startIndex..<data.endIndex
        let slice = Data(data[range])
        let lengths = slice.withUnsafeBytes { ContentDefinedChunker.chunkLengths(of: $0, parameters: parameters)! }
        var offset = range.lowerBound
        return lengths.map { length in
            defer { offset += length }
            return GrantChunk(
                offset: Int64(offset), length: Int64(length), sha256: Seeding.sha256(data[offset..<(offset + length)]))
        }
    }

    /// What a server answers for chunks `asked` of `data`.
    static func answer(_ data: Data, chunks: [GrantChunk], asked: [Int]) -> SubchunkList {
        SubchunkList(
            chunking: subchunking,
            chunks: asked.map { index in
                let chunk = chunks[index]
                return ChunkSubchunks(
                    index: index,
                    subchunks: cut(data, Int(chunk.offset)..<Int(chunk.offset + chunk.length), subchunking))
            })
    }

    @Test func onlyMissingChunksNearVerifiedOnesAreCutFiner() {
        #expect(SubchunkPlan.candidates(pending: [0, 1, 2], verified: []) == [])
        #expect(SubchunkPlan.reach == 4)
        #expect(
            SubchunkPlan.candidates(pending: Array(0..<10) + Array(11..<25) + Array(26..<30), verified: [10, 25])
                == [6, 7, 8, 9, 11, 12, 13, 14, 21, 22, 23, 24, 26, 27, 28, 29])
        #expect(SubchunkPlan.candidates(pending: [0, 1, 2, 3], verified: [4]) == [0, 1, 2, 3])
    }

    @Test func gapsMergeAdjacentMissingSubchunks() {
        let subchunks = (0..<6).map { GrantChunk(offset: Int64(100 + $0 * 10), length: 10, sha256: "") }
        #expect(SubchunkPlan.gaps(subchunks, local: [0, 1, 2, 3, 4, 5]) == [])
        #expect(SubchunkPlan.gaps(subchunks, local: [2, 5]) == [100..<120, 130..<150])
        #expect(SubchunkPlan.gaps(subchunks, local: []) == [100..<160])
    }

    @Test func aServerAnswerIsCheckedBeforeUse() throws {
        let data = Seeding.bytes(64 << 10, seed: 21)
        let chunks = Self.cut(data, nil, Self.chunking)
        try #require(chunks.count >= 6)
        let good = Self.answer(data, chunks: chunks, asked: [4, 1])
        let accepted = try SubchunkPlan.subchunks(of: good, asked: [4, 1], chunks: chunks, chunking: Self.subchunking)
        #expect(accepted == good.chunks.map(\.subchunks))

        func refused(_ change: (inout SubchunkList) -> Void, asked: [Int] = [4, 1]) -> Bool {
            var list = good
            change(&list)
            do {
                _ = try SubchunkPlan.subchunks(of: list, asked: asked, chunks: chunks, chunking: Self.subchunking)
                return false
            } catch {
                guard case .invalidResponse = error else { return false }
                return true
            }
        }
        #expect(refused({ $0.chunking = Self.chunking }))
        #expect(refused({ $0.chunks.reverse() }))
        #expect(refused({ $0.chunks.removeLast() }))
        #expect(refused({ _ in }, asked: [4, 2]))
        #expect(refused({ $0.chunks[0].subchunks.removeLast() }))  // short of the chunk's end
        #expect(refused({ $0.chunks[0].subchunks.removeFirst() }))  // does not start at the chunk
        #expect(refused({ $0.chunks[1].subchunks[1].offset += 1 }))  // a gap
        #expect(refused({ $0.chunks[1].subchunks[0].length += 1 }))  // an overlap
        #expect(refused({ $0.chunks[0].subchunks[0].sha256 = "xyz" }))
        #expect(refused({ $0.chunks[0].subchunks[0].sha256.removeLast() }))
        #expect(refused({ list in  // one subchunk over the maximum
            let chunk = chunks[4]
            list.chunks[0].subchunks = [GrantChunk(offset: chunk.offset, length: chunk.length, sha256: chunk.sha256)]
        }))
        #expect(refused({ list in  // more subchunks than the length allows: empty ones
            list.chunks[0].subchunks.append(GrantChunk(offset: chunks[5].offset, length: 0, sha256: chunks[5].sha256))
        }))
    }

    /// The subchunks of the installed chunks an update does not reuse are indexed where they are, each range cut from
    /// its own first byte as the server cuts a chunk; with them, an insertion costs a few subchunks, not its chunks.
    @Test func anInsertionCostsOnlyTheSubchunksAroundIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("subchunks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = Seeding.bytes(256 << 10, seed: 22)
        try old.write(to: folder.appendingPathComponent("level.bin"))
        var new = old
        let inserted = Seeding.bytes(100, seed: 23)
        new.insert(contentsOf: inserted, at: 128 << 10)
        let oldChunks = Self.cut(old, nil, Self.chunking)
        let newChunks = Self.cut(new, nil, Self.chunking)

        // The installed chunks 2.0 does not have are the orphans; their subchunks are indexed.
        let newHashes = Set(newChunks.map(\.sha256))
        let orphans = oldChunks.filter { !newHashes.contains($0.sha256) }
        try #require(!orphans.isEmpty && orphans.count <= 3)
        let local = try #require(
            try ChunkIndex.build(
                ranges: orphans.map { ChunkSource(path: "level.bin", offset: $0.offset, length: $0.length) },
                in: folder, parameters: Self.subchunking, fileSystem: POSIXFileSystem()))
        for orphan in orphans {
            for subchunk in Self.cut(old, Int(orphan.offset)..<Int(orphan.offset + orphan.length), Self.subchunking) {
                #expect(
                    local[subchunk.sha256]
                        == ChunkSource(path: "level.bin", offset: subchunk.offset, length: subchunk.length))
            }
        }

        // The chunks 2.0 lacks, next to the reused ones, cut finer: most of their bytes are local.
        let oldHashes = Set(oldChunks.map(\.sha256))
        let pending = newChunks.indices.filter { !oldHashes.contains(newChunks[$0].sha256) }
        let verified = Set(newChunks.indices).subtracting(pending)
        let candidates = SubchunkPlan.candidates(pending: pending, verified: verified)
        #expect(candidates == pending)
        let lists = try SubchunkPlan.subchunks(
            of: Self.answer(new, chunks: newChunks, asked: candidates), asked: candidates, chunks: newChunks,
            chunking: Self.subchunking)
        var fetched: Int64 = 0
        var whole: Int64 = 0
        for (index, subchunks) in zip(candidates, lists) {
            whole += newChunks[index].length
            let found = Set(subchunks.indices.filter { local[subchunks[$0].sha256]?.length == subchunks[$0].length })
            fetched += SubchunkPlan.gaps(subchunks, local: found).reduce(0) { $0 + Int64($1.count) }
        }
        // The 100 new bytes, and the subchunks they fall in or shift (at most a few of at most 1 KiB).
        #expect(fetched >= 100 && fetched <= 100 + 4 * 1024, "\(fetched) of \(whole) bytes fetched")
        #expect(whole >= 4 * fetched, "whole chunks: \(whole), subchunks: \(fetched)")
    }

    @Test func theSubchunkPathIsTheGrantsURLWithTheFilesEncodedPath() throws {
        var file = Seeding.file("Contents/a b.bin", Data())
        file.url = "/v1/content/p/2/Contents/a%20b.bin"
        var grant = Grant(
            productID: "p", contentVersion: "2", totalLength: 0, expiresAt: Date(), token: "t", files: [file],
            subchunks: GrantSubchunks(url: "/v1/subchunks/p/2", chunking: .subchunks))
        #expect(try GrantValidation.subchunkPath(of: file, in: grant) == "/v1/subchunks/p/2/Contents/a%20b.bin")
        try GrantValidation.validate(grant, productID: "p", limits: GrantLimits())

        for url in ["/v1/subchunks/p/1", "https://elsewhere.example/v1/subchunks/p/2", "/v1/subchunks/p/2/", "", "//x"] {
            grant.subchunks?.url = url
            #expect(throws: KioskError.unsafeGrant(productID: "p", problem: .subchunksURL(url))) {
                try GrantValidation.validate(grant, productID: "p", limits: GrantLimits())
            }
        }
    }
}
