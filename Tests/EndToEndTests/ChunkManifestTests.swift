import Crypto
import Foundation
import KioskCore
import Testing

/// Grants list each file's content-defined chunks, which match the bytes on disk and can be fetched and verified
/// one range at a time.
@Suite("Server: chunk manifests in grants")
struct ChunkManifestTests {
    static let product = "com.example.kiosk.chunked"

    /// Random bytes from KioskCore's SplitMix64.
    static func randomBytes(_ count: Int, seed: UInt64) -> Data {
        var generator = SplitMix64(seed: seed)
        var data = Data(count: count)
        data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
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
        return data
    }

    static func hex(_ bytes: some DataProtocol) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    @Test func aGrantCarriesTheChunksOfTheFilesOnDisk() async throws {
        try await TestServer.with { server in
            let folder = server.contentDirectory.appendingPathComponent(Self.product)
            try FileManager.default.createDirectory(
                at: folder.appendingPathComponent("Contents"), withIntermediateDirectories: true)
            let info = [
                "product_id": Self.product, "type": "non_consumable", "title": "Chunked", "content_version": "1",
            ]
            try JSONSerialization.data(withJSONObject: info).write(to: folder.appendingPathComponent("Info.json"))
            let big = Self.randomBytes(10 << 20 + 777, seed: 2026)
            try big.write(to: folder.appendingPathComponent("Contents/big.bin"))
            try Data("small".utf8).write(to: folder.appendingPathComponent("Contents/small.txt"))
            await server.reloadCatalog()

            let receipt = try await server.buy(Self.product).receiptData
            let response = try await server.post(
                "/v1/downloads",
                GrantRequest(
                    proof: .receipt(receipt), productID: Self.product, installationID: TestServer.installationID))
            #expect(response.status == 200)
            let grant = try KioskJSON.decode(Grant.self, from: response.body)
            #expect(grant.chunking == .standard)
            let files = Dictionary(uniqueKeysWithValues: grant.files.map { ($0.path, $0) })
            #expect(files["Contents/small.txt"]?.chunks == nil, "a file of one chunk lists none")

            let file = try #require(files["Contents/big.bin"])
            let chunks = try #require(file.chunks)
            let onDisk = try Data(contentsOf: folder.appendingPathComponent("Contents/big.bin"))
            #expect(file.sha256 == Self.hex(onDisk))
            // The boundaries the chunker finds in the file's bytes, and each slice's SHA-256.
            let lengths = onDisk.withUnsafeBytes {
                ContentDefinedChunker.chunkLengths(of: $0, parameters: .standard)!
            }
            #expect(chunks.map { Int($0.length) } == lengths)
            var offset: Int64 = 0
            for (index, chunk) in chunks.enumerated() {
                #expect(chunk.offset == offset)
                if index < chunks.count - 1 { #expect(chunk.length >= 256 << 10) }
                #expect(chunk.length <= 4 << 20)
                #expect(chunk.sha256 == Self.hex(onDisk[Int(chunk.offset)..<Int(chunk.offset + chunk.length)]))
                offset += chunk.length
            }
            #expect(offset == file.length)
            #expect(chunks.count >= 4, "10 MiB of random bytes average about 1 MiB a chunk")

            // A chunk fetched alone with a range request verifies against its hash.
            let middle = chunks[chunks.count / 2]
            let ranged = try await server.send(
                "GET", file.url,
                headers: [
                    ("Authorization", "Bearer \(grant.token)"),
                    ("Range", "bytes=\(middle.offset)-\(middle.offset + middle.length - 1)"),
                ])
            #expect(ranged.status == 206)
            #expect(Self.hex(ranged.body) == middle.sha256)
        }
    }
}
