import Crypto
import Foundation
import KioskCore
import Testing

@testable import KioskKit

/// #10: the plan of an update (which files are copied whole, which chunks are copied), on small inputs.
@Suite("Update seeding")
struct UpdateSeedingTests {
    /// Small chunks, so that a few KiB hold many.
    static let chunking = ChunkingParameters(minimum: 64, average: 256, maximum: 1024)

    static func sha256(_ bytes: some DataProtocol) -> String { SHA256.hash(data: Data(bytes)).hexString }

    static func bytes(_ count: Int, seed: UInt64) -> Data {
        var generator = SplitMix64(seed: seed)
        return Data((0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
    }

    /// The chunks of `data` as a server lists them.
    static func chunks(of data: Data) -> [GrantChunk] {
        let lengths = data.withUnsafeBytes { ContentDefinedChunker.chunkLengths(of: $0, parameters: chunking) ?? [] }
        var offset = 0
        return lengths.map { length in
            defer { offset += length }
            return GrantChunk(
                offset: Int64(offset), length: Int64(length), sha256: sha256(data[offset..<(offset + length)]))
        }
    }

    static func file(_ path: String, _ data: Data) -> GrantFile {
        GrantFile(path: path, length: Int64(data.count), sha256: sha256(data), url: "/v1/content/p/2/\(path)")
    }

    @Test func wholeFilesMatchByHashAndLengthUnderAnyPath() {
        let a = Self.bytes(500, seed: 1)
        let b = Self.bytes(700, seed: 2)
        let installed = [
            InstalledFile(path: "old/a.bin", length: 500, sha256: Self.sha256(a).uppercased()),
            InstalledFile(path: "b.bin", length: 700, sha256: Self.sha256(b)),
            InstalledFile(path: "unknown.bin", length: 9, sha256: ""),  // rebuilt from disk: hash unknown
        ]
        let granted = [
            Self.file("new/a.bin", a), Self.file("b.bin", b), Self.file("c.bin", Self.bytes(9, seed: 3)),
        ]
        #expect(
            SeedPlan.wholeFiles(granted, installed: installed, wanted: { _ in true })
                == ["new/a.bin": "old/a.bin", "b.bin": "b.bin"])
        // Files already verified (or found staged) are not wanted.
        #expect(
            SeedPlan.wholeFiles(granted, installed: installed, wanted: { $0.path != "b.bin" })
                == ["new/a.bin": "old/a.bin"])
        // Same hash, other length: not the same file.
        var lying = installed
        lying[1].length = 701
        #expect(SeedPlan.wholeFiles(granted, installed: lying, wanted: { _ in true }) == ["new/a.bin": "old/a.bin"])
    }

    @Test func theIndexCutsAsTheServerDoesAndAnEditCostsOnlyTheChunksNearIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("seed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = Self.bytes(64 << 10, seed: 7)
        try old.write(to: folder.appendingPathComponent("level.bin"))
        let index = try #require(
            try ChunkIndex.build(
                [InstalledFile(path: "level.bin", length: Int64(old.count), sha256: "")], in: folder,
                parameters: Self.chunking, fileSystem: POSIXFileSystem()))
        // Every chunk the server would list for the installed bytes is in the index, where it is.
        let oldChunks = Self.chunks(of: old)
        #expect(index.count == Set(oldChunks.map(\.sha256)).count)
        for chunk in oldChunks {
            #expect(index[chunk.sha256] == ChunkSource(path: "level.bin", offset: chunk.offset, length: chunk.length))
        }

        // The new version inserts 100 bytes in the middle: only the chunks around it are missing.
        var new = old
        new.insert(contentsOf: Self.bytes(100, seed: 8), at: 32 << 10)
        let newChunks = Self.chunks(of: new)
        let reusable = SeedPlan.reusableChunks(newChunks, pending: Array(newChunks.indices), index: index)
        let missing = Set(newChunks.indices).subtracting(reusable.map(\.index))
        #expect(!missing.isEmpty && missing.count <= 3, "\(missing.count) of \(newChunks.count) chunks missing")
        let missingBytes = missing.reduce(Int64(0)) { $0 + newChunks[$1].length }
        #expect(missingBytes <= 3 * 1024)
        // Each reused source holds the chunk's bytes.
        for (position, source) in reusable {
            let chunk = newChunks[position]
            let bytes = old[Int(source.offset)..<Int(source.offset + source.length)]
            #expect(Self.sha256(bytes) == chunk.sha256)
        }
        // Chunks already verified are not planned again.
        let pending = Array(newChunks.indices.dropFirst(4))
        #expect(SeedPlan.reusableChunks(newChunks, pending: pending, index: index).allSatisfy { $0.index >= 4 })
    }

    @Test func anUnknownChunkingBuildsNoIndex() throws {
        var parameters = Self.chunking
        parameters.algorithm = "rabin-v9"
        #expect(
            try ChunkIndex.build(
                [], in: URL(fileURLWithPath: "/nonexistent"), parameters: parameters,
                fileSystem: POSIXFileSystem()) == nil)
    }

    /// The reused bytes journaled with verified files and chunks: counted once, dropped with their file, and absent
    /// from the records of fetched bytes (whose JSON is unchanged, so older journals and older records read).
    @Test func reusedBytesAreCountedOnceAndDroppedWithTheirFile() throws {
        let data = Self.bytes(4 << 10, seed: 9)
        var file = Self.file("a.bin", data)
        file.chunks = Self.chunks(of: data)
        let whole = Self.file("b.bin", Self.bytes(10, seed: 10))
        let grant = Grant(
            productID: "p", contentVersion: "2", totalLength: file.length + whole.length, expiresAt: Date(), token: "t",
            files: [file, whole], chunking: Self.chunking)
        var record = DownloadRecord(
            id: DownloadID(), productID: "p", receipt: "r", signedTransaction: nil, priority: .normal, sequence: 0,
            state: .active, attempt: 0, grant: nil, entityTags: [:], verifiedPaths: [], integrityFailures: [:],
            createdAt: Date())
        let chunk = try #require(file.chunks?.first)
        let changes: [DownloadChange] = [
            .grant(grant, receivedAt: Date()),
            .chunkVerified(path: "a.bin", index: 0, reused: chunk.length),
            .chunkVerified(path: "a.bin", index: 0, reused: chunk.length),  // a replay: counted once
            .chunkVerified(path: "a.bin", index: 1),
            .verified(path: "b.bin", reused: 10),
            .verified(path: "b.bin", reused: 10),
        ]
        for change in changes { record.apply(change) }
        #expect(record.reusedBytes == ["a.bin": chunk.length, "b.bin": 10])
        #expect(record.reusedLength == chunk.length + 10)
        // Assembling the file keeps what its chunks reused; discarding it drops it.
        record.apply(.verified(path: "a.bin"))
        #expect(record.reusedBytes["a.bin"] == chunk.length)
        record.apply(.discarded(path: "a.bin"))
        #expect(record.reusedBytes == ["b.bin": 10])
        record.apply(.grant(nil, receivedAt: nil))
        #expect(record.reused == nil)

        // Fetched records encode as before; reused ones carry the field and read back.
        let fetched = String(
            decoding: try JournalEncoder.encode(DownloadChange.chunkVerified(path: "a", index: 3)), as: UTF8.self)
        #expect(fetched == #"{"chunkVerified":{"path":"a","index":3}}"#)
        let reused = DownloadChange.verified(path: "b", reused: 42)
        #expect(try KioskJSON.decode(DownloadChange.self, from: JournalEncoder.encode(reused)) == reused)
        #expect(
            try KioskJSON.decode(DownloadChange.self, from: Data(#"{"verified":{"path":"b"}}"#.utf8))
                == .verified(path: "b"))
    }
}
