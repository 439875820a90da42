import Foundation
import KioskCore
import Testing

/// Paging of `GET /v1/products` and the change feed `?since=`, against the real server, while the catalog changes.
@Suite("Server: catalog paging and change feed")
struct CatalogPagingAndFeedTests {
    /// 2026-01-01T00:00:00Z.
    static let epoch = Date(timeIntervalSince1970: 1_767_225_600)

    /// Writes a product without `published_at` into the server's content folder.
    static func publishUndated(_ id: String, in server: TestServer, title: String = "Archive") throws {
        let folder = server.contentDirectory.appendingPathComponent(id)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let info = ["product_id": id, "type": "non_consumable", "title": title, "content_version": "1"]
        try JSONSerialization.data(withJSONObject: info).write(to: folder.appendingPathComponent("Info.json"))
    }

    /// Issues dated one day apart (`issue.00` oldest) and three undated products.
    static func publishMany(in server: TestServer, issues: Int) async throws {
        for day in 0..<issues {
            try server.publishIssue(
                "com.example.kiosk.issue.\(String(format: "%02d", day))",
                at: epoch.addingTimeInterval(Double(day) * 86_400))
        }
        for index in 0..<3 { try publishUndated("com.example.kiosk.archive.\(index)", in: server) }
        await server.reloadCatalog()
    }

    static func remove(_ id: String, in server: TestServer) throws {
        try FileManager.default.removeItem(at: server.contentDirectory.appendingPathComponent(id))
    }

    static func setTitle(_ title: String, of id: String, in server: TestServer) throws {
        let info = server.contentDirectory.appendingPathComponent(id).appendingPathComponent("Info.json")
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: info)) as? [String: Any])
        json["title"] = title
        try JSONSerialization.data(withJSONObject: json).write(to: info)
    }

    static func query(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
    }

    static func catalog(_ server: TestServer, _ target: String = "/v1/products") async throws -> CatalogResponse {
        let response = try await server.send("GET", target)
        #expect(response.status == 200, "\(target): \(response.text)")
        return try KioskJSON.decode(CatalogResponse.self, from: response.body)
    }

    static func feed(_ server: TestServer, since: String, cursor: String? = nil, limit: Int? = nil) async throws
        -> CatalogChanges
    {
        var target = "/v1/products?since=\(query(since))"
        if let cursor { target += "&cursor=\(query(cursor))" }
        if let limit { target += "&limit=\(limit)" }
        let response = try await server.send("GET", target)
        #expect(response.status == 200, "\(target): \(response.text)")
        return try KioskJSON.decode(CatalogChanges.self, from: response.body)
    }

    @Test func withoutPagingParametersTheAnswerIsTheWholeCatalogAsBefore() async throws {
        try await TestServer.with { server in
            let response = try await server.send("GET", "/v1/products")
            let catalog = try KioskJSON.decode(CatalogResponse.self, from: response.body)
            #expect(catalog.nextCursor == nil)
            #expect(!response.text.contains("next_cursor"))
            #expect(try KioskJSON.encode(CatalogResponse(products: catalog.products)) == response.body)
        }
    }

    @Test func pagesAreNewestFirstWithUndatedLastAndRefuseBadParameters() async throws {
        try await TestServer.with { server in
            try await Self.publishMany(in: server, issues: 10)
            let whole = try await Self.catalog(server).products.map(\.id)
            var walked: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let page = try await Self.catalog(
                    server, "/v1/products?limit=4" + (cursor.map { "&cursor=\(Self.query($0))" } ?? ""))
                #expect(page.products.count <= 4)
                walked += page.products.map(\.id)
                cursor = page.nextCursor
                pages += 1
            } while cursor != nil && pages < 20
            #expect(walked == whole)
            #expect(Array(whole.suffix(3)) == (0..<3).map { "com.example.kiosk.archive.\($0)" })
            #expect(whole.first == TestServer.Sample.magazine)
            #expect(
                whole.firstIndex(of: "com.example.kiosk.issue.09")! < whole.firstIndex(
                    of: "com.example.kiosk.issue.08")!)
            for target in [
                "/v1/products?limit=0", "/v1/products?limit=501", "/v1/products?limit=x", "/v1/products?cursor=nope",
                "/v1/products?ids=a.b&limit=2", "/v1/products?since=x&ids=a.b",
            ] {
                let bad = try await server.send("GET", target)
                #expect(bad.status == 400, "\(target)")
                #expect(try KioskJSON.decode(APIErrorEnvelope.self, from: bad.body).error.code == "bad_request")
            }
        }
    }

    /// Between pages, products are added before and after the cursor and removed on both sides: every product
    /// unchanged during the walk appears exactly once, and no product appears twice.
    @Test func pagingKeepsItsGuaranteesWhileTheCatalogChanges() async throws {
        try await TestServer.with { server in
            try await Self.publishMany(in: server, issues: 20)
            let before = Set(try await Self.catalog(server).products.map(\.id))
            var walked: [String] = []
            var cursor: String?
            var pages = 0
            var touched = Set<String>()
            repeat {
                let page = try await Self.catalog(
                    server, "/v1/products?limit=5" + (cursor.map { "&cursor=\(Self.query($0))" } ?? ""))
                walked += page.products.map(\.id)
                cursor = page.nextCursor
                pages += 1
                if pages == 2 {
                    // Newest issues (already walked) and older ones (not yet), added, removed and an undated one.
                    let changes = [
                        ("com.example.kiosk.issue.new-front", 40.0), ("com.example.kiosk.issue.new-middle", 3.5),
                    ]
                    for (id, day) in changes {
                        try server.publishIssue(id, at: Self.epoch.addingTimeInterval(day * 86_400))
                        touched.insert(id)
                    }
                    try Self.publishUndated("com.example.kiosk.archive.new", in: server)
                    for id in [
                        "com.example.kiosk.issue.18", "com.example.kiosk.issue.02", "com.example.kiosk.archive.1",
                    ] {
                        try Self.remove(id, in: server)
                        touched.insert(id)
                    }
                    touched.insert("com.example.kiosk.archive.new")
                    await server.reloadCatalog()
                }
            } while cursor != nil && pages < 40
            #expect(cursor == nil, "the walk ends")
            #expect(Set(walked).count == walked.count, "no product appears twice: \(walked)")
            for id in before.subtracting(touched) {
                #expect(walked.filter { $0 == id }.count == 1, "\(id) appears exactly once")
            }
            #expect(walked.contains("com.example.kiosk.issue.new-middle"), "added after the cursor: seen")
            #expect(!walked.contains("com.example.kiosk.issue.new-front"), "added before the cursor: not seen")
            #expect(walked.contains("com.example.kiosk.issue.18"), "removed after it was seen")
            #expect(!walked.contains("com.example.kiosk.issue.02"), "removed before it was reached")
        }
    }

    @Test func theFeedAnswersAddedChangedAndRemovedProductsAnd304() async throws {
        try await TestServer.with { server in
            let first = try await server.send("GET", "/v1/products", headers: [("Accept-Encoding", "gzip")])
            let gzipTag = try #require(first.header("ETag"))
            let tag = try #require(try await server.send("GET", "/v1/products").header("ETag"))
            let unchanged = try await Self.feed(server, since: tag)
            #expect(unchanged.kind == .changes && unchanged.catalogETag == tag)
            #expect(unchanged.added.isEmpty && unchanged.changed.isEmpty && unchanged.removed.isEmpty)

            try server.publishIssue(
                "com.example.kiosk.magazine.2026-12", at: Self.epoch.addingTimeInterval(400 * 86_400))
            try Self.setTitle("A new title", of: TestServer.Sample.book, in: server)
            try Self.remove(TestServer.Sample.levels, in: server)
            await server.reloadCatalog()
            let now = try await server.send("GET", "/v1/products")
            let current = try KioskJSON.decode(CatalogResponse.self, from: now.body)
            for since in [tag, gzipTag, "W/\(tag)", String(tag.dropFirst().dropLast())] {
                let changes = try await Self.feed(server, since: since)
                #expect(changes.kind == .changes, "\(since)")
                #expect(changes.catalogETag == now.header("ETag"))
                #expect(changes.added.map(\.id) == ["com.example.kiosk.magazine.2026-12"])
                #expect(changes.changed == current.products.filter { $0.id == TestServer.Sample.book })
                #expect(changes.changed.first?.title == "A new title")
                #expect(changes.removed == [TestServer.Sample.levels])
                #expect(changes.products.isEmpty && changes.nextCursor == nil)
            }

            // Same ETag, 304 and HEAD rules as the catalog.
            let target = "/v1/products?since=\(Self.query(tag))"
            let answer = try await server.send("GET", target, headers: [("Accept-Encoding", "gzip")])
            let answerTag = try #require(answer.header("ETag"))
            #expect(answer.header("Cache-Control") == "public, max-age=10, stale-while-revalidate=60")
            let again = try await server.send(
                "GET", target, headers: [("Accept-Encoding", "gzip"), ("If-None-Match", answerTag)])
            #expect(again.status == 304 && again.body.isEmpty && again.header("ETag") == answerTag)
            let head = try await server.send("HEAD", target, headers: [("Accept-Encoding", "gzip")])
            #expect(head.status == 200 && head.body.isEmpty && head.header("ETag") == answerTag)

            // A product changed back and forth is still "changed"; one added then removed is not listed at all.
            try Self.setTitle("A Field Guide to Swift on the Server", of: TestServer.Sample.book, in: server)
            try Self.remove("com.example.kiosk.magazine.2026-12", in: server)
            await server.reloadCatalog()
            let net = try await Self.feed(server, since: tag)
            #expect(net.added.isEmpty && net.changed.map(\.id) == [TestServer.Sample.book])
            #expect(net.removed == [TestServer.Sample.levels])
        }
    }

    @Test func anUnknownTagGetsTheWholeCatalogInPages() async throws {
        try await TestServer.with { server in
            try await Self.publishMany(in: server, issues: 6)
            let whole = try await server.send("GET", "/v1/products")
            let products = try KioskJSON.decode(CatalogResponse.self, from: whole.body).products
            var collected: [Product] = []
            var cursor: String?
            var pages = 0
            repeat {
                let page = try await Self.feed(server, since: "\"not-a-tag-we-served\"", cursor: cursor, limit: 4)
                #expect(page.kind == .full && page.catalogETag == whole.header("ETag"))
                #expect(page.added.isEmpty && page.changed.isEmpty && page.removed.isEmpty)
                collected += page.products
                cursor = page.nextCursor
                pages += 1
            } while cursor != nil && pages < 10
            #expect(collected == products)
            #expect(pages == (products.count + 3) / 4)
            let empty = try await Self.feed(server, since: "")
            #expect(empty.kind == .full)
            let pageCursor = try #require(try await Self.catalog(server, "/v1/products?limit=1").nextCursor)
            let mixed = try await server.send("GET", "/v1/products?since=x&cursor=\(Self.query(pageCursor))")
            #expect(mixed.status == 400)
        }
    }

    /// Changes pages carry the walk's first catalog tag; a long list of changes is split into pages.
    @Test func feedPagesSplitLongChanges() async throws {
        try await TestServer.with { server in
            let tag = try #require(try await server.send("GET", "/v1/products").header("ETag"))
            try await Self.publishMany(in: server, issues: 7)
            try Self.remove(TestServer.Sample.levels, in: server)
            try Self.remove(TestServer.Sample.magazine, in: server)
            await server.reloadCatalog()
            let latest = try #require(try await server.send("GET", "/v1/products").header("ETag"))
            var added: [String] = []
            var removed: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let page = try await Self.feed(server, since: tag, cursor: cursor, limit: 3)
                #expect(page.kind == .changes && page.catalogETag == latest)
                #expect(page.added.count + page.changed.count + page.removed.count <= 3)
                added += page.added.map(\.id)
                removed += page.removed
                cursor = page.nextCursor
                pages += 1
            } while cursor != nil && pages < 10
            #expect(Set(added).count == 10 && added.count == 10)
            #expect(removed == [TestServer.Sample.levels, TestServer.Sample.magazine])
            #expect(pages == 4)
        }
    }

    /// The history is kept in memory: after a restart, a tag of the previous process is unknown (the whole catalog),
    /// while the current tag, a hash of the content, is known to the new process too.
    @Test func afterARestartAnOldTagGetsTheWholeCatalog() async throws {
        let content = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-feed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: content) }
        let (old, current) = try await TestServer.with { server in
            let old = try #require(try await server.send("GET", "/v1/products").header("ETag"))
            try Self.setTitle("Renamed", of: TestServer.Sample.book, in: server)
            await server.reloadCatalog()
            #expect(try await Self.feed(server, since: old).kind == .changes)
            try FileManager.default.copyItem(at: server.contentDirectory, to: content)
            return (old, try #require(try await server.send("GET", "/v1/products").header("ETag")))
        }
        try await TestServer.with(content: content) { server in
            #expect(try await server.send("GET", "/v1/products").header("ETag") == current)
            let fresh = try await Self.feed(server, since: current)
            #expect(fresh.kind == .changes && fresh.added.isEmpty && fresh.changed.isEmpty && fresh.removed.isEmpty)
            #expect(try await Self.feed(server, since: old).kind == .full)
        }
    }
}
