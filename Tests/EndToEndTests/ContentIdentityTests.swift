import Crypto
import Foundation
import KioskCore
import Testing

/// A content file replaced behind the server's back with the same size and modification time (`rsync -t`, `cp -p`,
/// tar) must be served with its new digest, never the old one.
@Suite("Server: content file identity")
struct ContentIdentityTests {
    private func hex(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    @Test func aFileReplacedWithTheSameSizeAndModificationTimeIsServedWithItsNewDigest() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(TestServer.Sample.magazine)
            let grant = try await server.grant(TestServer.Sample.magazine, receipt: purchase.receiptData)
            let file = try #require(grant.files.first { $0.path == "Contents/issue.pdf" })
            let first = try await server.send("GET", file.url, headers: [("Authorization", "Bearer \(grant.token)")])
            #expect(first.status == 200)
            #expect(first.header("ETag") == "\"\(file.sha256)\"")

            // rsync -t: new bytes of the same length written beside the file, the old modification time copied,
            // then renamed over it.
            let path = server.contentDirectory.appendingPathComponent(TestServer.Sample.magazine)
                .appendingPathComponent(file.path).path
            var info = stat()
            #expect(lstat(path, &info) == 0)
            var replacement = first.body
            replacement[replacement.count / 2] ^= 0xFF
            let temporary = path + ".rsync-tmp"
            try replacement.write(to: URL(fileURLWithPath: temporary))
            #expect(utimensat(AT_FDCWD, temporary, [info.st_atim, info.st_mtim], 0) == 0)
            #expect(rename(temporary, path) == 0)

            let second = try await server.send("GET", file.url, headers: [("Authorization", "Bearer \(grant.token)")])
            #expect(second.status == 200)
            #expect(second.body == replacement)
            #expect(second.header("ETag") == "\"\(hex(replacement))\"", "the ETag names the bytes sent")
            let digest = Data(SHA256.hash(data: second.body)).base64EncodedString()
            #expect(second.header("Repr-Digest") == "sha-256=:\(digest):")
            let regranted = try await server.grant(TestServer.Sample.magazine, receipt: purchase.receiptData)
            #expect(regranted.files.first { $0.path == file.path }?.sha256 == hex(replacement))
        }
    }
}
