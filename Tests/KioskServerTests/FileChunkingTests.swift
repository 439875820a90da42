import Crypto
import Foundation
import KioskCore
import Testing

@testable import KioskServer

@Suite("File chunks")
struct FileChunkingTests {
    typealias F = CatalogTestFixtures
    static let parameters = ChunkingParameters.standard

    /// Random bytes from KioskCore's SplitMix64, eight a word.
    static func randomBytes(_ count: Int, seed: UInt64) -> Data {
        var generator = SplitMix64(seed: seed)
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { buffer in
            var index = 0
            while index < count {
                var word = generator.next()
                for _ in 0..<8 where index < count {
                    buffer[index] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                    index += 1
                }
            }
        }
        return Data(bytes)
    }

    /// The chunks of `data` computed without the server's code: the chunker's lengths over the whole buffer, and
    /// SHA-256 of each slice. Nil for a file of one chunk (or none).
    static func expectedChunks(of data: Data) -> [GrantChunk]? {
        let lengths = data.withUnsafeBytes { ContentDefinedChunker.chunkLengths(of: $0, parameters: parameters)! }
        guard lengths.count > 1 else { return nil }
        var offset = 0
        return lengths.map { length in
            defer { offset += length }
            let digest = SHA256.hash(data: data[offset..<(offset + length)]).map { String(format: "%02x", $0) }
            return GrantChunk(offset: Int64(offset), length: Int64(length), sha256: digest.joined())
        }
    }

    /// The chunks are in order from 0 to `length`, each within the limits but the last.
    static func expectWellFormed(_ chunks: [GrantChunk], length: Int64) {
        var offset: Int64 = 0
        for (index, chunk) in chunks.enumerated() {
            #expect(chunk.offset == offset)
            #expect(chunk.length <= parameters.maximum)
            if index < chunks.count - 1 { #expect(chunk.length >= parameters.minimum) }
            offset += chunk.length
        }
        #expect(offset == length)
    }

    static func manifestFile(_ hashes: FileHashes) -> ManifestFile {
        ManifestFile(
            path: "Contents/f", directory: "/", digest: hashes.digest, chunks: hashes.chunks,
            identity: FileIdentity(size: 0, modifiedNanoseconds: 0, changedNanoseconds: 0, inode: 0, device: 0))
    }

    /// Empty, one byte, the minimum, one byte more, and files of several chunks.
    static let lengths: [Int] = [0, 1, 256 << 10, 256 << 10 + 1, 3 << 20, 9 << 20 + 12_345]

    @Test(arguments: lengths)
    func theChunksMatchAnIndependentComputation(length: Int) throws {
        let directory = try ServerTestDirectory("chunks")
        let data = Self.randomBytes(length, seed: UInt64(length))
        try directory.write("file", data)
        let hashes = try HashCache.hashFile(atPath: directory.url("file").path)
        #expect(hashes.digest.hexString == F.sha256(data))
        let chunks = Self.manifestFile(hashes).grantChunks
        #expect(chunks == Self.expectedChunks(of: data))
        if let chunks { Self.expectWellFormed(chunks, length: Int64(length)) }
        if length > 8 << 20 { #expect((chunks?.count ?? 0) >= 3, "9 MiB of random bytes make several chunks") }
        if length <= Self.parameters.minimum { #expect(chunks == nil, "a file of one chunk has no list") }
    }

    /// Bytes the gear hash never cuts are cut at the maximum; a file of exactly the maximum is one chunk.
    @Test(arguments: [4 << 20, 4 << 20 + 1, 10 << 20])
    func uniformBytesAreCutAtTheMaximum(length: Int) throws {
        let directory = try ServerTestDirectory("chunks")
        let data = Data(count: length)
        try directory.write("zeros", data)
        let hashes = try HashCache.hashFile(atPath: directory.url("zeros").path)
        let chunks = Self.manifestFile(hashes).grantChunks
        #expect(chunks == Self.expectedChunks(of: data))
        if length == Self.parameters.maximum { #expect(chunks == nil) }
        if let chunks {
            Self.expectWellFormed(chunks, length: Int64(length))
            #expect(chunks.dropLast().allSatisfy { $0.length == Self.parameters.maximum })
        }
    }

    // MARK: The hash cache

    /// A product of one big file (several chunks) and one small one.
    static func writeProduct(in content: ServerTestDirectory, seed: UInt64 = 7) throws -> Data {
        let big = randomBytes(3 << 20, seed: seed)
        try content.writeProduct(id: "com.a", files: ["Contents/big.bin": big, "Contents/small.txt": Data("abc".utf8)])
        return big
    }

    @Test func theCacheKeepsTheChunksAndASecondLoadHashesNothing() throws {
        let content = try ServerTestDirectory("catalog")
        let data = try ServerTestDirectory("data")
        let big = try Self.writeProduct(in: content)
        var cache = HashCache()
        let first = F.load(content, cache: &cache)
        let file = try #require(first.products["com.a"]?.file(atPath: "Contents/big.bin"))
        #expect(file.grantChunks == Self.expectedChunks(of: big))
        try cache.save(to: data.url("hash-cache.txt"))
        let saved = try String(contentsOf: data.url("hash-cache.txt"), encoding: .utf8)
        #expect(saved.hasPrefix("kiosk-hash-cache 2 fastcdc-gear64-nc2-v1 262144 1048576 4194304\n"))

        var reloaded = HashCache(contentsOf: data.url("hash-cache.txt"))
        #expect(!reloaded.isDirty)
        let second = F.load(content, cache: &reloaded)
        #expect(!reloaded.isDirty, "nothing was hashed")
        #expect(second.products == first.products, "the chunks came back from the file")
    }

    /// A cache of format 1 (no chunk lists), or of format 2 with chunks cut under other parameters: small files
    /// keep their entries, bigger ones are hashed once, and the cache is written again in the current format.
    @Test(arguments: [
        (HashCache.headerWithoutChunks, ""),
        ("kiosk-hash-cache 2 fastcdc-gear64-nc2-v1 65536 262144 1048576", "1048576:\(F.poisonedDigest),2097152:\(F.poisonedDigest) "),
    ])
    func aCacheOfAnEarlierFormatReusesSmallFilesAndHashesBigOnesOnce(header: String, chunks: String) throws {
        let content = try ServerTestDirectory("catalog")
        let data = try ServerTestDirectory("data")
        let big = try Self.writeProduct(in: content)
        let files = try #require(F.load(content).products["com.a"]?.files)
        let lines = files.map {
            let id = $0.identity
            return "\(F.poisonedDigest) \(id.size) \(id.modifiedNanoseconds) \(id.changedNanoseconds) \(id.inode) "
                + "\(id.device) \(chunks.isEmpty ? "" : $0.length > 3 ? chunks : "- ")\($0.absolutePath)"
        }
        let url = data.url("hash-cache.txt")
        try Data(([header] + lines).joined(separator: "\n").utf8).write(to: url)

        var cache = HashCache(contentsOf: url)
        let snapshot = F.load(content, cache: &cache)
        let product = try #require(snapshot.products["com.a"])
        #expect(product.file(atPath: "Contents/small.txt")?.sha256 == F.poisonedDigest, "the small entry was reused")
        #expect(product.file(atPath: "Contents/big.bin")?.sha256 == F.sha256(big), "the big file was hashed")
        #expect(product.file(atPath: "Contents/big.bin")?.grantChunks == Self.expectedChunks(of: big))
        #expect(cache.isDirty)
        try cache.save(to: url)

        var reloaded = HashCache(contentsOf: url)
        #expect(!reloaded.isDirty, "the file is of the current format now")
        #expect(F.load(content, cache: &reloaded).products == snapshot.products)
        #expect(!reloaded.isDirty, "the second load hashes nothing")
    }

    /// A line whose chunk list cannot be the file's (lengths that do not add up, a single chunk, a zero length) is
    /// skipped: the file is hashed again.
    @Test(arguments: [
        "262144:\(String(repeating: "a", count: 64))",
        "\(3 << 20):\(String(repeating: "a", count: 64))",
        "0:\(String(repeating: "a", count: 64)),\(3 << 20):\(String(repeating: "a", count: 64))",
    ])
    func aChunkListThatDoesNotAddUpIsHashedAgain(chunks: String) throws {
        let content = try ServerTestDirectory("catalog")
        let data = try ServerTestDirectory("data")
        let big = try Self.writeProduct(in: content)
        let file = try #require(F.load(content).products["com.a"]?.file(atPath: "Contents/big.bin"))
        let id = file.identity
        let line =
            "\(F.poisonedDigest) \(id.size) \(id.modifiedNanoseconds) \(id.changedNanoseconds) \(id.inode) "
            + "\(id.device) \(chunks) \(file.absolutePath)"
        try Data([HashCache.header, line].joined(separator: "\n").utf8).write(to: data.url("hash-cache.txt"))
        var cache = HashCache(contentsOf: data.url("hash-cache.txt"))
        let loaded = try #require(F.load(content, cache: &cache).products["com.a"]?.file(atPath: "Contents/big.bin"))
        #expect(loaded.sha256 == F.sha256(big))
        #expect(loaded.grantChunks == Self.expectedChunks(of: big))
    }

    /// New bytes of the same size, renamed over the file with its modification time: the identity (inode) tells
    /// the change, across a restart, and the chunks are those of the new bytes.
    @Test func aFileReplacedWithTheSameSizeGetsNewChunks() throws {
        let content = try ServerTestDirectory("catalog")
        let data = try ServerTestDirectory("data")
        let before = try Self.writeProduct(in: content, seed: 7)
        var cache = HashCache()
        let old = try #require(F.load(content, cache: &cache).products["com.a"]?.file(atPath: "Contents/big.bin"))
        try cache.save(to: data.url("hash-cache.txt"))
        let path = content.url("com.a/Contents/big.bin")
        let modified = try F.modificationTime(path)

        let after = Self.randomBytes(before.count, seed: 8)
        try content.write("com.a/Contents/big.bin.tmp", after)
        try F.setModificationTime(modified, of: content.url("com.a/Contents/big.bin.tmp"))
        #expect(rename(content.url("com.a/Contents/big.bin.tmp").path, path.path) == 0)

        var restarted = HashCache(contentsOf: data.url("hash-cache.txt"))
        let new = try #require(
            F.load(content, cache: &restarted).products["com.a"]?.file(atPath: "Contents/big.bin"))
        #expect(new.modifiedNanoseconds == old.modifiedNanoseconds, "the test kept the modification time")
        #expect(new.sha256 == F.sha256(after))
        #expect(new.grantChunks == Self.expectedChunks(of: after))
        #expect(new.grantChunks != old.grantChunks)
    }
}
