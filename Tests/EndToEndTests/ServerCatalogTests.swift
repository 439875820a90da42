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

    @Test func headAnswersTheHeadersOfGetWithoutABody() async throws {
        try await TestServer.with { server in
            for (target, headers) in [
                ("/v1/products", [("Accept-Encoding", "gzip")]), ("/v1/products", []),
                ("/v1/products?ids=\(TestServer.Sample.book)", []),
                ("/v1/products/\(TestServer.Sample.book)", []),
            ] {
                let get = try await server.send("GET", target, headers: headers)
                let head = try await server.send("HEAD", target, headers: headers)
                #expect(get.status == 200 && head.status == 200, "\(target)")
                #expect(head.body.isEmpty)
                for name in ["ETag", "Content-Type", "Content-Encoding", "Cache-Control", "Vary"] {
                    #expect(head.header(name) == get.header(name), "\(target) \(name)")
                }
                #expect(head.header("Content-Length") == String(get.body.count), "\(target)")
            }
        }
    }

    @Test func oneProductHasItsOwnETagAnd304And404() async throws {
        try await TestServer.with { server in
            let response = try await server.send("GET", "/v1/products/\(TestServer.Sample.book)")
            #expect(response.status == 200)
            let product = try KioskJSON.decode(Product.self, from: response.body)
            let listed = try KioskJSON.decode(CatalogResponse.self, from: try await server.send("GET", "/v1/products").body)
            #expect(listed.products.first { $0.id == TestServer.Sample.book } == product)
            let tag = try #require(response.header("ETag"))
            let again = try await server.send(
                "GET", "/v1/products/\(TestServer.Sample.book)", headers: [("If-None-Match", "W/\(tag)")])
            #expect(again.status == 304)
            #expect(again.header("ETag") == tag)
            #expect(again.header("Cache-Control") == response.header("Cache-Control"))
            let other = try await server.send("GET", "/v1/products/\(TestServer.Sample.magazine)")
            #expect(other.header("ETag") != tag)
            let unknown = try await server.send("GET", "/v1/products/com.example.nope")
            #expect(unknown.status == 404)
            #expect(try KioskJSON.decode(APIErrorEnvelope.self, from: unknown.body).error.code == "not_found")
            let bad = try await server.send("GET", "/v1/products/bad%20id")
            #expect(bad.status == 400)
        }
    }

    @Test func theCatalogMayBeKeptBrieflyByCaches() async throws {
        try await TestServer.with { server in
            let response = try await server.send("GET", "/v1/products")
            #expect(response.header("Cache-Control") == "public, max-age=10, stale-while-revalidate=60")
            #expect(response.header("Vary") == "Accept-Encoding")
        }
    }

    /// The ETag is a hash of the answer: the same across restarts and across instances serving the same content,
    /// and it changes with the content.
    @Test func theETagIsStableAcrossInstancesAndChangesWithTheContent() async throws {
        let tags = try await TestServer.with { first in
            try await TestServer.with { second in
                var tags: [String?] = []
                for server in [first, second] {
                    tags.append(try await server.send("GET", "/v1/products").header("ETag"))
                    tags.append(
                        try await server.send("GET", "/v1/products", headers: [("Accept-Encoding", "gzip")]).header("ETag"))
                }
                return tags
            }
        }
        #expect(tags[0] != nil && tags[0] == tags[2])
        #expect(tags[1] != nil && tags[1] == tags[3] && tags[1] != tags[0])
        try await TestServer.with { server in
            let before = try await server.send("GET", "/v1/products").header("ETag")
            #expect(before == tags[0], "a restart on the same content keeps the tag")
            try FileManager.default.removeItem(
                at: server.contentDirectory.appendingPathComponent(TestServer.Sample.book))
            await server.reloadCatalog()
            let after = try await server.send("GET", "/v1/products")
            #expect(after.header("ETag") != before)
            let catalog = try KioskJSON.decode(CatalogResponse.self, from: after.body)
            #expect(!catalog.products.contains { $0.id == TestServer.Sample.book })
        }
    }

    /// Requests racing a reload see the old answer with its tag or the new one with its tag, never a mix.
    @Test func aReloadSwapsTheAnswerAndItsTagAtomically() async throws {
        try await TestServer.with { server in
            let old = try await server.send("GET", "/v1/products")
            let folder = server.contentDirectory.appendingPathComponent(TestServer.Sample.book)
            let info = folder.appendingPathComponent("Info.json")
            var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: info)) as? [String: Any])
            json["title"] = "A new title"
            try JSONSerialization.data(withJSONObject: json).write(to: info)
            async let reloaded: Void = server.reloadCatalog()
            var seen: [String: Data] = [:]
            for _ in 0..<40 {
                let response = try await server.send("GET", "/v1/products")
                let tag = try #require(response.header("ETag"))
                if let body = seen[tag] { #expect(body == response.body, "one tag, one body") }
                seen[tag] = response.body
            }
            await reloaded
            let new = try await server.send("GET", "/v1/products")
            #expect(new.header("ETag") != old.header("ETag"))
            for (tag, body) in seen {
                #expect(tag == old.header("ETag") ? body == old.body : body == new.body)
            }
        }
    }
}
