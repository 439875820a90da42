import Foundation
import KioskCore
import Testing

@Suite("Server: catalog and operations")
struct ServerCatalogTests {
    @Test func healthAndMetrics() async throws {
        try await TestServer.with { server in
            let health = try await server.send("GET", "/healthz")
            #expect(health.status == 200)
            #expect(try KioskJSON.decode(HealthResponse.self, from: health.body).status == "ok")
            _ = try await server.send("GET", "/v1/products")
            let metrics = try await server.send("GET", "/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.header("Content-Type")?.hasPrefix("text/plain") == true)
            #expect(metrics.text.contains("kiosk_http_requests_total"))
            #expect(metrics.text.contains("kiosk_receipt_cache_hits"))
        }
    }

    @Test func listsTheSampleCatalogNewestFirst() async throws {
        try await TestServer.with { server in
            let response = try await server.send("GET", "/v1/products")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "application/json; charset=utf-8")
            let catalog = try KioskJSON.decode(CatalogResponse.self, from: response.body)
            #expect(catalog.products.map(\.id) == [
                TestServer.Sample.magazine, TestServer.Sample.levels, TestServer.Sample.book,
                TestServer.Sample.subscription,
            ])
            #expect(catalog.invalidProductIDs.isEmpty)
            let levels = try #require(catalog.products.first { $0.id == TestServer.Sample.levels })
            #expect(levels.type == .nonConsumable)
            #expect(levels.fileCount == 10)
            #expect(levels.contentVersion == "1.2")
            let subscription = try #require(catalog.products.first { $0.id == TestServer.Sample.subscription })
            #expect(subscription.fileCount == 0 && subscription.contentLength == 0)
        }
    }

    @Test func filtersByIDsAndListsUnknownOnes() async throws {
        try await TestServer.with { server in
            let response = try await server.send(
                "GET", "/v1/products?ids=\(TestServer.Sample.book),com.example.nope,\(TestServer.Sample.book)")
            let catalog = try KioskJSON.decode(CatalogResponse.self, from: response.body)
            #expect(catalog.products.map(\.id) == [TestServer.Sample.book])
            #expect(catalog.invalidProductIDs == ["com.example.nope"])
            let bad = try await server.send("GET", "/v1/products?ids=../../etc")
            #expect(bad.status == 400)
            #expect(try KioskJSON.decode(APIErrorEnvelope.self, from: bad.body).error.code == "bad_request")
        }
    }

    @Test func strongETagAnswers304AndGzipIsHonoured() async throws {
        try await TestServer.with { server in
            let first = try await server.send("GET", "/v1/products")
            let tag = try #require(first.header("ETag"))
            #expect(tag.hasPrefix("\""))
            let again = try await server.send("GET", "/v1/products", headers: [("If-None-Match", tag)])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            let other = try await server.send("GET", "/v1/products", headers: [("If-None-Match", "\"nope\"")])
            #expect(other.status == 200)
            let gzipped = try await server.send("GET", "/v1/products", headers: [("Accept-Encoding", "gzip")])
            #expect(gzipped.header("Content-Encoding") == "gzip")
            #expect(gzipped.body.prefix(2) == Data([0x1F, 0x8B]))
            #expect(gzipped.body.count < first.body.count)
            let refused = try await server.send("GET", "/v1/products", headers: [("Accept-Encoding", "gzip;q=0")])
            #expect(refused.header("Content-Encoding") == nil)
        }
    }

    @Test func unknownRoutesAnswerTheErrorEnvelope() async throws {
        try await TestServer.with { server in
            let response = try await server.send("GET", "/v2/nothing")
            #expect(response.status == 404)
            #expect(try KioskJSON.decode(APIErrorEnvelope.self, from: response.body).error.code == "not_found")
        }
    }

    @Test func contentChangesArePickedUpOnReload() async throws {
        try await TestServer.with { server in
            let folder = server.contentDirectory.appendingPathComponent("com.example.kiosk.magazine.2026-12")
            try FileManager.default.createDirectory(
                at: folder.appendingPathComponent("Contents"), withIntermediateDirectories: true)
            try Data(
                #"{"product_id":"com.example.kiosk.magazine.2026-12","type":"non_consumable","title":"December","content_version":"1.0","published_at":"2026-12-01T00:00:00Z"}"#
                    .utf8
            ).write(to: folder.appendingPathComponent("Info.json"))
            try Data("hello".utf8).write(to: folder.appendingPathComponent("Contents/issue.txt"))
            await server.reloadCatalog()
            let catalog = try KioskJSON.decode(CatalogResponse.self, from: try await server.send("GET", "/v1/products").body)
            #expect(catalog.products.first?.id == "com.example.kiosk.magazine.2026-12")
        }
    }
}
