import CompressNIO
import Foundation
import KioskCore
import NIOCore
import Testing

@testable import KioskKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A grant for a product of 20,000 files: gzipped when asked for, under 1 MB that way, and decoded by KioskKit.
@Suite("Server: grants of many files")
struct ManyFileGrantTests {
    static let product = "com.example.kiosk.levels.huge"
    static let fileCount = 20_000

    @Test func aGrantOf20000FilesIsUnder1MBGzippedAndKioskKitDecodesIt() async throws {
        try await TestServer.with { server in
            try Self.writeProduct(in: server.contentDirectory)
            await server.reloadCatalog()
            let receipt = try await server.buy(Self.product).receiptData
            let request = try KioskJSON.encode(
                GrantRequest(
                    proof: .receipt(receipt), productID: Self.product, installationID: TestServer.installationID))
            let json = [("Content-Type", "application/json")]

            let gzipped = try await server.send(
                "POST", "/v1/downloads", headers: json + [("Accept-Encoding", "gzip")], body: request)
            #expect(gzipped.status == 200)
            #expect(gzipped.header("Content-Encoding") == "gzip")
            #expect(gzipped.header("Vary") == "Accept-Encoding")
            #expect(gzipped.body.count < 1_000_000, "\(gzipped.body.count) bytes gzipped")
            var compressed = ByteBuffer(bytes: gzipped.body)
            let decompressed = Data(try compressed.decompress(with: .gzip()).readableBytesView)
            let fromGzip = try KioskJSON.decode(Grant.self, from: decompressed)
            #expect(fromGzip.files.count == Self.fileCount)
            #expect(fromGzip.totalLength == fromGzip.files.reduce(0) { $0 + $1.length })

            let plain = try await server.send("POST", "/v1/downloads", headers: json, body: request)
            #expect(plain.status == 200)
            #expect(plain.header("Content-Encoding") == nil)
            #expect(try KioskJSON.decode(Grant.self, from: plain.body).files == fromGzip.files)

            let api = APIClient(
                serverURL: server.baseURL, idleTimeout: 30,
                limits: APIClient.Limits(maximumResponseSize: 16 << 20, deadline: 60, grant: GrantLimits()),
                installationID: TestServer.installationID)
            let grant = try await api.grant(productID: Self.product, proof: .receipt(receipt))
            #expect(grant.files == fromGzip.files)
            #expect(grant.expiresAt > Date())
        }
    }

    /// Writes the product: 20 folders of 1,000 files of a few bytes, with plain system calls (FileManager per file
    /// would take most of the test's time).
    private static func writeProduct(in content: URL) throws {
        let folder = content.appendingPathComponent(product)
        let info: [String: String] = [
            "product_id": product, "type": "non_consumable", "title": "Many levels", "content_version": "1",
        ]
        for level in 0..<(fileCount / 1000) {
            try FileManager.default.createDirectory(
                at: folder.appendingPathComponent("Contents/level\(level)"), withIntermediateDirectories: true)
        }
        try JSONSerialization.data(withJSONObject: info).write(to: folder.appendingPathComponent("Info.json"))
        for index in 0..<fileCount {
            let path = folder.appendingPathComponent("Contents/level\(index / 1000)/tile\(index).bin").path
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
            defer { close(descriptor) }
            let bytes = Array("tile \(index)\n".utf8)
            guard write(descriptor, bytes, bytes.count) == bytes.count else { throw CocoaError(.fileWriteUnknown) }
        }
    }
}
