import CompressNIO
import Foundation
import KioskCore
import KioskServerTestSupport
import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import KioskServer

/// A reproducible generator (SplitMix64), so a failing case can be run again.
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("CRC-32")
struct CRC32Tests {
    @Test func theCheckValueMatchesTheStandard() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
        #expect(CRC32.checksum(Array("56789".utf8), continuing: CRC32.checksum(Array("1234".utf8))) == 0xCBF4_3926)
    }

    @Test func combiningEqualsTheCRCOfTheConcatenation() {
        var random = SeededGenerator(state: 16)
        var lengths = [0, 1, 2, 3, 4, 7, 8, 255, 256, 4096, 65_537]
        for _ in 0..<40 { lengths.append(Int.random(in: 0...20_000, using: &random)) }
        for (index, secondLength) in lengths.enumerated() {
            let firstLength = lengths[(index + 5) % lengths.count]
            let first = (0..<firstLength).map { _ in UInt8.random(in: 0...255, using: &random) }
            let second = (0..<secondLength).map { _ in UInt8.random(in: 0...255, using: &random) }
            let combined = CRC32.combine(
                CRC32.checksum(first), CRC32.checksum(second), secondLength: second.count)
            #expect(combined == CRC32.checksum(first + second), "lengths \(firstLength) + \(secondLength)")
        }
    }
}

/// A catalog of one product on disk, its files given by path and contents.
private func catalog(_ files: [String: Data], in content: ServerTestDirectory) async throws -> ContentCatalog {
    try content.writeProduct(id: "com.example.pack", files: files)
    return await ContentCatalog(
        contentDirectory: content.url, dataDirectory: nil, logger: LogRecorder().logger)
}

private func files(_ count: Int) -> [String: Data] {
    Dictionary(uniqueKeysWithValues: (0..<count).map { ("Contents/d\($0 % 7)/f (\($0)).bin", Data("file \($0)".utf8)) })
}

private func bytes(_ buffers: [ByteBuffer]) -> Data { Data(buffers.flatMap { $0.readableBytesView }) }

@Suite("Grant file lists")
struct GrantFileListTests {
    /// The grant as the server encoded it before file lists were cached: the whole value at once.
    private func direct(_ product: CatalogProduct, token: String) -> Grant {
        let files = GrantFileList.files(of: product)
        let chunked = files.contains { $0.chunks != nil }
        let (id, version) = (product.info.productID, product.info.contentVersion)
        return Grant(
            productID: id, contentVersion: version, totalLength: product.contentLength,
            expiresAt: ServerTestFixtures.november2026, token: token, files: files,
            chunking: chunked ? .standard : nil,
            subchunks: chunked ? GrantSubchunks(url: "/v1/subchunks/\(id)/\(version)", chunking: .subchunks) : nil)
    }

    private func issued(_ grant: Grant, files: GrantFileList) throws -> IssuedGrant {
        var fields = grant
        fields.files = []
        return try IssuedGrant(fields: fields, files: files)
    }

    @Test func theStitchedJSONIsTheDirectEncodingByteForByte() async throws {
        let content = try ServerTestDirectory()
        let product = try #require(await catalog(files(50), in: content).snapshot.products["com.example.pack"])
        // A token with characters JSON escapes, and one that spells the field the split looks for.
        for token in ["abc.def", #"x"files":[]\"#, ""] {
            let grant = direct(product, token: token)
            let list = try GrantFileList(product: product)
            #expect(list.grantSubchunks(for: product) == nil)
            let answer = try issued(grant, files: list)
            let json = bytes(answer.json)
            #expect(json == (try KioskJSON.encode(grant)))
            #expect(try KioskJSON.decode(Grant.self, from: json) == grant)
            #expect(!String(decoding: json, as: UTF8.self).contains("chunk"), "files of one chunk list none")
        }
    }

    /// Files of several chunks: `chunks` in each of them, `chunking` at the top, still the direct encoding.
    @Test func aGrantWithChunkedFilesIsTheDirectEncodingByteForByte() async throws {
        let content = try ServerTestDirectory()
        var contents = files(3)
        contents["Contents/big.bin"] = FileChunkingTests.randomBytes(3 << 20, seed: 11)
        contents["Contents/zeros.bin"] = Data(count: 9 << 20)
        let product = try #require(await catalog(contents, in: content).snapshot.products["com.example.pack"])
        let list = try GrantFileList(product: product)
        #expect(list.chunking == .standard)
        let grant = direct(product, token: "abc.def")
        #expect(list.grantSubchunks(for: product) == grant.subchunks)
        #expect(grant.files.filter { $0.chunks != nil }.map(\.path) == ["Contents/big.bin", "Contents/zeros.bin"])
        let answer = try issued(grant, files: list)
        let json = bytes(answer.json)
        #expect(json == (try KioskJSON.encode(grant)))
        #expect(try KioskJSON.decode(Grant.self, from: json) == grant)
        #expect(String(decoding: json, as: UTF8.self).hasPrefix(#"{"chunking":{"algorithm":"fastcdc-gear64-nc2-v1","#))
        var gzip = ByteBuffer(bytes: bytes(try answer.gzip()))
        #expect(Data(try gzip.decompress(with: .gzip()).readableBytesView) == json)
    }

    @Test func theFileListIsWhatJSONEncoderWrites() throws {
        let odd = [
            "Contents/a b (1),+.bin", #"quote " and \ backslash"#, "tab\t newline\n nul\u{0} bell\u{7} del\u{7F}",
            "é ü 😀 \u{2028}", "/slashes/and%20percent", "",
        ]
        let files = odd.enumerated().map { index, text in
            GrantFile(path: text, length: Int64(index) * 1_000_000_007, sha256: text, url: "/v1/content/" + text)
        }
        var chunked = files
        chunked[1].chunks = [
            GrantChunk(offset: 0, length: 5_000_000_000, sha256: odd[1]),
            GrantChunk(offset: 5_000_000_000, length: 1, sha256: "ab"),
        ]
        chunked[2].chunks = []
        for list in [files, [], [files[0]], chunked] {
            #expect(Data(try GrantFileList.encode(list).readableBytesView) == (try KioskJSON.encode(list)))
        }
    }

    @Test(arguments: [0, 1, 500])
    func theStitchedGzipDecompressesToTheDirectEncoding(fileCount: Int) async throws {
        let content = try ServerTestDirectory()
        let product = try #require(
            await catalog(files(fileCount), in: content).snapshot.products["com.example.pack"])
        let list = try GrantFileList(product: product)
        let grant = direct(product, token: "eyJ0b2tlbiI6MX0.c2lnbmF0dXJl")
        var gzip = ByteBuffer(bytes: bytes(try issued(grant, files: list).gzip()))
        #expect(gzip.getBytes(at: 0, length: 3) == [0x1F, 0x8B, 8])
        let expected = try KioskJSON.encode(grant)
        var copy = gzip
        let decompressed = try copy.decompress(with: .gzip())
        #expect(Data(decompressed.readableBytesView) == expected)
        #expect(try KioskJSON.decode(Grant.self, from: Data(decompressed.readableBytesView)) == grant)
        // The trailer is the CRC-32 and length of the whole JSON, and the decoder checks it.
        let trailer = gzip.readableBytes - 8
        #expect(gzip.getInteger(at: trailer, endianness: .little, as: UInt32.self) == CRC32.checksum(expected))
        #expect(gzip.getInteger(at: trailer + 4, endianness: .little, as: UInt32.self) == UInt32(expected.count))
        gzip.setInteger(~gzip.getInteger(at: trailer, as: UInt8.self)!, at: trailer)
        #expect(throws: (any Error).self) { try gzip.decompress(with: .gzip()) }
    }

    @Test func aListIsEncodedOncePerVersionEvenWhenAskedForTogether() async throws {
        let content = try ServerTestDirectory()
        let product = try #require(await catalog(files(20), in: content).snapshot.products["com.example.pack"])
        let cache = GrantFileListCache()
        let encodings = Counter()
        let counting: @Sendable (CatalogProduct) throws -> GrantFileList = {
            encodings.add()
            return try GrantFileList(product: $0)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<16 { group.addTask { _ = try cache.list(for: product, encode: counting) } }
            try await group.waitForAll()
        }
        #expect(encodings.value == 1)
        #expect(cache.count == 1)
    }

    @Test func theLeastRecentlyUsedListsAreDroppedBeyondTheBudget() async throws {
        let content = try ServerTestDirectory()
        for id in ["com.a", "com.b", "com.c"] { try content.writeProduct(id: id, files: files(30)) }
        let products = await ContentCatalog(
            contentDirectory: content.url, dataDirectory: nil, logger: LogRecorder().logger
        ).snapshot.products
        let (a, b, c) = (products["com.a"]!, products["com.b"]!, products["com.c"]!)
        let size = try GrantFileList(product: a).byteCount
        let cache = GrantFileListCache(byteBudget: size * 5 / 2)
        let encodings = Counter()
        let counting: (CatalogProduct) throws -> GrantFileList = {
            encodings.add()
            return try GrantFileList(product: $0)
        }
        _ = try cache.list(for: a, encode: counting)
        _ = try cache.list(for: b, encode: counting)
        _ = try cache.list(for: a, encode: counting)  // a is now used more recently than b
        _ = try cache.list(for: c, encode: counting)  // passes the budget: b goes
        #expect(encodings.value == 3)
        #expect(cache.count == 2)
        #expect(cache.byteCount <= cache.byteBudget)
        _ = try cache.list(for: a, encode: counting)
        #expect(encodings.value == 3, "a was kept")
        _ = try cache.list(for: b, encode: counting)
        #expect(encodings.value == 4, "b was dropped")
    }

    @Test func aReloadThatChangesTheCatalogDropsTheListsAndAnUnchangedOneKeepsThem() async throws {
        let content = try ServerTestDirectory()
        let catalog = try await catalog(files(5), in: content)
        let encodings = Counter()
        let counting: (CatalogProduct) throws -> GrantFileList = {
            encodings.add()
            return try GrantFileList(product: $0)
        }
        func grantList() throws -> GrantFileList {
            let snapshot = catalog.snapshot
            return try snapshot.grantFiles.list(for: snapshot.products["com.example.pack"]!, encode: counting)
        }
        _ = try grantList()
        _ = try grantList()
        await catalog.reload()
        _ = try grantList()
        #expect(encodings.value == 1, "an unchanged reload keeps the snapshot and its lists")
        try content.write("com.example.pack/Contents/new.bin", Data("new".utf8))
        await catalog.reload()
        let list = try grantList()
        #expect(encodings.value == 2, "a changed product is encoded again")
        #expect(String(buffer: list.json).contains("Contents/new.bin"))
    }
}

/// A count shared with `@Sendable` closures.
private final class Counter: Sendable {
    private let count = NIOLockedValueBox(0)
    func add() { count.withLockedValue { $0 += 1 } }
    var value: Int { count.withLockedValue { $0 } }
}
