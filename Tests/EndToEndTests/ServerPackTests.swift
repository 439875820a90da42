import Foundation
import KioskCore
import Testing

/// `GET`/`HEAD /v1/packs/<product>/<version>` over the wire: a version's files concatenated in grant order, with a
/// single range, the content preconditions, and the content refusals.
@Suite("Server: product packs")
struct ServerPackTests {
    static let product = "com.example.kiosk.levels.packed"

    /// A product whose files include empty ones (at the start, inside, at the end) and one over a chunk.
    static let files: [(path: String, length: Int)] = [
        ("Contents/a-empty.bin", 0), ("Contents/b.bin", 1_000), ("Contents/c-empty.bin", 0),
        ("Contents/levels/d.json", 37), ("Contents/levels/e.bin", 300_000), ("Contents/z-empty.bin", 0),
    ]

    static func writeProduct(in content: URL, version: String = "1") throws {
        let folder = content.appendingPathComponent(product)
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("Contents/levels"), withIntermediateDirectories: true)
        let info = ["product_id": product, "type": "non_consumable", "title": "Packed", "content_version": version]
        try JSONSerialization.data(withJSONObject: info).write(to: folder.appendingPathComponent("Info.json"))
        var random = SplitMix64(seed: version == "1" ? 11 : 12)
        for file in files {
            try Data(random.bytes(file.length)).write(to: folder.appendingPathComponent(file.path))
        }
    }

    /// A server with the product, a grant for it, and the pack's expected bytes (each file fetched on its own).
    static func withPack(
        _ body: (TestServer, Grant, GrantPack, Data) async throws -> Void
    ) async throws {
        try await TestServer.with { server in
            try writeProduct(in: server.contentDirectory)
            await server.reloadCatalog()
            let grant = try await server.grant(product, receipt: try await server.buy(product).receiptData)
            let pack = try #require(grant.pack)
            var expected = Data()
            for file in grant.files {
                let answer = try await server.send("GET", file.url, headers: [auth(grant)])
                #expect(answer.status == 200)
                expected += answer.body
            }
            try await body(server, grant, pack, expected)
        }
    }

    static func auth(_ grant: Grant) -> (String, String) { ("Authorization", "Bearer \(grant.token)") }

    @Test func thePackIsTheFilesInGrantOrder() async throws {
        try await Self.withPack { server, grant, pack, expected in
            #expect(pack.url == "/v1/packs/\(Self.product)/1")
            #expect(pack.length == grant.totalLength)
            #expect(Int64(expected.count) == pack.length)
            let answer = try await server.send("GET", pack.url, headers: [Self.auth(grant)])
            #expect(answer.status == 200)
            #expect(answer.body == expected)
            #expect(answer.header("Content-Length") == String(pack.length))
            #expect(answer.header("Accept-Ranges") == "bytes")
            #expect(answer.header("Content-Type") == "application/octet-stream")
            #expect(answer.header("ETag")?.hasPrefix("\"pack-") == true)
            // The token may come as a query parameter too, as for content.
            let byQuery = try await server.send(
                "GET", pack.url + "?token=" + grant.token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
            #expect(byQuery.status == 200)
            #expect(byQuery.body == expected)
        }
    }

    @Test func rangesAcrossFileBoundariesGiveTheExactBytes() async throws {
        try await Self.withPack { server, grant, pack, expected in
            let length = Int(pack.length)
            // Inside one file, across one boundary, across an empty file, the last byte, a suffix, an open range,
            // and one past the end (clamped).
            let ranges: [(spec: String, first: Int, last: Int)] = [
                ("bytes=10-20", 10, 20), ("bytes=990-1010", 990, 1010), ("bytes=1000-1036", 1000, 1036),
                ("bytes=\(length - 1)-\(length - 1)", length - 1, length - 1), ("bytes=-50", length - 50, length - 1),
                ("bytes=999-", 999, length - 1), ("bytes=1030-\(length + 500)", 1030, length - 1),
            ]
            for range in ranges {
                let answer = try await server.send("GET", pack.url, headers: [Self.auth(grant), ("Range", range.spec)])
                #expect(answer.status == 206, "\(range.spec)")
                #expect(answer.header("Content-Range") == "bytes \(range.first)-\(range.last)/\(length)")
                #expect(answer.body == expected[range.first...range.last], "\(range.spec)")
            }
            let outside = try await server.send(
                "GET", pack.url, headers: [Self.auth(grant), ("Range", "bytes=\(length)-")])
            #expect(outside.status == 416)
            #expect(outside.header("Content-Range") == "bytes */\(length)")
            // Several ranges get the whole pack.
            let several = try await server.send(
                "GET", pack.url, headers: [Self.auth(grant), ("Range", "bytes=0-1,5-9")])
            #expect(several.status == 200)
            #expect(several.body == expected)
        }
    }

    @Test func headAndTheConditionalRequestsFollowTheContentRules() async throws {
        try await Self.withPack { server, grant, pack, expected in
            let head = try await server.send("HEAD", pack.url, headers: [Self.auth(grant), ("Range", "bytes=0-9")])
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("Content-Length") == String(pack.length))
            let eTag = try #require(head.header("ETag"))
            let notModified = try await server.send(
                "GET", pack.url, headers: [Self.auth(grant), ("If-None-Match", eTag)])
            #expect(notModified.status == 304)
            #expect(notModified.header("ETag") == eTag)
            let failed = try await server.send("GET", pack.url, headers: [Self.auth(grant), ("If-Match", "\"other\"")])
            #expect(failed.status == 412)
            // If-Range: the current tag honours the range, another tag gets the whole pack.
            let resumed = try await server.send(
                "GET", pack.url, headers: [Self.auth(grant), ("Range", "bytes=5-9"), ("If-Range", eTag)])
            #expect(resumed.status == 206)
            #expect(resumed.body == expected[5...9])
            let stale = try await server.send(
                "GET", pack.url, headers: [Self.auth(grant), ("Range", "bytes=5-9"), ("If-Range", "\"pack-old\"")])
            #expect(stale.status == 200)
            #expect(stale.body == expected)
        }
    }

    @Test func theTagIsTheSameOnAnotherServerWithTheSameFiles() async throws {
        var tags: [String] = []
        for _ in 0..<2 {
            try await Self.withPack { server, grant, pack, _ in
                tags.append(
                    try #require(try await server.send("HEAD", pack.url, headers: [Self.auth(grant)]).header("ETag")))
            }
        }
        #expect(tags.count == 2 && tags[0] == tags[1])
    }

    @Test func packsAreRefusedAsContentIs() async throws {
        try await Self.withPack { server, grant, pack, _ in
            let missing = try await server.send("GET", pack.url)
            #expect(missing.status == 401)
            #expect(missing.text.contains("token_missing"))
            let otherProduct = try await server.send(
                "GET", "/v1/packs/\(TestServer.Sample.levels)/1", headers: [Self.auth(grant)])
            #expect(otherProduct.status == 403)
            for bad in ["/v1/packs/\(Self.product)", "/v1/packs/\(Self.product)/1/x", "/v1/packs/..%2F/1"] {
                let answer = try await server.send("GET", bad, headers: [Self.auth(grant)])
                #expect(answer.status == 400, "\(bad)")
            }
            // A new version: the old pack is gone, and the new grant's pack has the new bytes.
            try Self.writeProduct(in: server.contentDirectory, version: "2")
            await server.reloadCatalog()
            let gone = try await server.send("GET", pack.url, headers: [Self.auth(grant)])
            #expect(gone.status == 410)
            #expect(gone.text.contains("version_gone"))
        }
    }

    @Test func aProductOfOneFileHasNoPack() async throws {
        try await TestServer.with { server in
            let product = TestServer.Sample.book
            let grant = try await server.grant(product, receipt: try await server.buy(product).receiptData)
            #expect(grant.files.count == 1)
            #expect(grant.pack == nil)
        }
    }
}
