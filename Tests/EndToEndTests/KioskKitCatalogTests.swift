import Foundation
import KioskCore
import KioskKit
import Testing

/// KioskKit's copy of the catalog: kept in the cache root and brought up to date with the change feed, measured on
/// the wire through a byte-counting loopback proxy.
@Suite("KioskKit catalog and change feed", .serialized, .timeLimit(.minutes(3)))
struct KioskKitCatalogTests {
    typealias Feed = CatalogPagingAndFeedTests

    /// How many products the catalog has in these tests: large enough that the whole catalog is hundreds of
    /// kilobytes, against the one small request a launch costs.
    static let productCount = 2_000

    /// A server with ``productCount`` undated products besides the sample ones.
    static func withLargeCatalog(_ body: (TestServer) async throws -> Void) async throws {
        try await TestServer.with { server in
            for index in 0..<productCount {
                try Feed.publishUndated("com.example.kiosk.archive.\(String(format: "%05d", index))", in: server)
            }
            await server.reloadCatalog()
            try await body(server)
        }
    }

    /// The server's catalog, fetched directly.
    static func serverCatalog(_ server: TestServer) async throws -> [Product] {
        try await Feed.catalog(server).products
    }

    @Test func aLaunchAfterOneProductChangedCostsUnder2KBOnTheWire() async throws {
        try await Self.withLargeCatalog { server in
            let proxy = try LoopbackProxy(to: server.port)
            defer { proxy.stop() }
            let root = server.makeScratchDirectory()

            let first = try await KioskClient(serverURL: proxy.baseURL, cacheRoot: root)
            #expect(await first.cachedProducts == nil)
            let whole = try await first.products().products
            #expect(whole == (try await Self.serverCatalog(server)))
            #expect(whole.count > Self.productCount)
            await first.close()
            // The whole catalog, gzipped (these products differ little, so it compresses well).
            let firstLaunch = proxy.bytesToServer + proxy.bytesToClient

            let changed = "com.example.kiosk.archive.01234"
            try Feed.setTitle("Archive, corrected", of: changed, in: server)
            await server.reloadCatalog()

            let second = try await KioskClient(serverURL: proxy.baseURL, cacheRoot: root)
            #expect(await second.cachedProducts == whole)
            let (before, beforeUp) = (proxy.bytesToClient, proxy.bytesToServer)
            let updated = try await second.products().products
            let launch = (proxy.bytesToClient - before) + (proxy.bytesToServer - beforeUp)
            #expect(launch < 2_048, "a launch after one change cost \(launch) bytes")
            #expect(launch * 3 < firstLaunch, "\(launch) bytes against \(firstLaunch) for the whole catalog")
            #expect(updated == (try await Self.serverCatalog(server)))
            #expect(updated.first { $0.id == changed }?.title == "Archive, corrected")
            #expect(await second.cachedProducts == updated)

            // Nothing changed since: the same small request again.
            let (again, againUp) = (proxy.bytesToClient, proxy.bytesToServer)
            #expect(try await second.products().products == updated)
            #expect((proxy.bytesToClient - again) + (proxy.bytesToServer - againUp) < 2_048)
            await second.close()
        }
    }

    @Test func availableUpdatesListInstalledProductsServedAtAnotherVersion() async throws {
        try await TestServer.with { server in
            let product = "com.example.kiosk.test.updates"
            try await KioskKitTestSupport.publish(
                product, version: "1", files: ["Contents/a.txt": Data("one".utf8)], on: server)
            let purchase = try await server.buy(product)
            let proxy = try LoopbackProxy(to: server.port)
            defer { proxy.stop() }
            let client = try await KioskClient(serverURL: proxy.baseURL, cacheRoot: server.makeScratchDirectory())
            #expect(try await client.availableUpdates().isEmpty)  // nothing installed
            _ = try await client.enqueue(productID: product, receipt: purchase.receiptData)
            _ = try await client.waitUntilInstalled(productID: product)
            #expect(try await client.availableUpdates().isEmpty)

            try await KioskKitTestSupport.publish(
                product, version: "2", files: ["Contents/a.txt": Data("two".utf8)], on: server)
            let before = proxy.bytesToClient + proxy.bytesToServer
            let updates = try await client.availableUpdates()
            #expect(updates.map(\.product.id) == [product])
            #expect(updates.first?.installedVersion == "1")
            #expect(updates.first?.availableVersion == "2")
            // From the change feed: one small request, whatever the size of the catalog.
            #expect(proxy.bytesToClient + proxy.bytesToServer - before < 2_048)

            _ = try await client.enqueue(productID: product, receipt: purchase.receiptData)
            let updated = try await client.waitUntilInstalled(productID: product)
            #expect(updated.version == "2")
            #expect(try await client.availableUpdates().isEmpty)
            await client.close()
        }
    }

    @Test func malformedIDsAreReportedAsInvalidWithoutAskingTheServer() async throws {
        try await TestServer.with { server in
            let proxy = try LoopbackProxy(to: server.port)
            defer { proxy.stop() }
            let client = try await KioskClient(serverURL: proxy.baseURL, cacheRoot: server.makeScratchDirectory())
            let book = TestServer.Sample.book
            let answer = try await client.products(ids: [book, "not a product id!", "com.example.unknown", ""])
            #expect(answer.products.map(\.id) == [book])
            #expect(Set(answer.invalidProductIDs) == ["not a product id!", "com.example.unknown", ""])
            let sent = proxy.bytesToServer
            let none = try await client.products(ids: ["../etc/passwd", "a b"])
            #expect(none.products.isEmpty && none.invalidProductIDs == ["../etc/passwd", "a b"])
            #expect(proxy.bytesToServer == sent)
            await client.close()
        }
    }

    @Test func addedAndRemovedProductsReachTheCopyInCatalogOrder() async throws {
        try await TestServer.with { server in
            try await Feed.publishMany(in: server, issues: 5)
            let root = server.makeScratchDirectory()
            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            _ = try await client.products()

            try server.publishIssue("com.example.kiosk.issue.new", at: Feed.epoch.addingTimeInterval(30 * 86_400))
            try Feed.remove("com.example.kiosk.issue.02", in: server)
            try Feed.remove("com.example.kiosk.archive.1", in: server)
            await server.reloadCatalog()

            let updated = try await client.products().products
            #expect(updated == (try await Self.serverCatalog(server)))
            #expect(updated.contains { $0.id == "com.example.kiosk.issue.new" })
            #expect(
                !updated.contains { $0.id == "com.example.kiosk.issue.02" || $0.id == "com.example.kiosk.archive.1" })
            await client.close()

            // The copy on disk is the updated catalog.
            let relaunched = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            #expect(await relaunched.cachedProducts == updated)
            await relaunched.close()
        }
    }

    @Test func aTagTheServerDoesNotKnowBringsTheWholeCatalog() async throws {
        let content = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-feed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: content) }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-feed-root-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        var before: [Product] = []
        try await TestServer.with { server in
            try await Feed.publishMany(in: server, issues: 3)
            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            before = try await client.products().products
            await client.close()
            try FileManager.default.copyItem(at: server.contentDirectory, to: content)
        }
        // While no server ran, the content changed: the next server has never served the app's tag.
        try FileManager.default.removeItem(at: content.appendingPathComponent("com.example.kiosk.issue.01"))
        try await TestServer.with(content: content) { server in
            try Feed.setTitle("Renamed", of: "com.example.kiosk.archive.0", in: server)
            await server.reloadCatalog()
            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            #expect(await client.cachedProducts == before)
            let after = try await client.products().products
            #expect(after == (try await Self.serverCatalog(server)))
            #expect(!after.contains { $0.id == "com.example.kiosk.issue.01" })
            #expect(after.first { $0.id == "com.example.kiosk.archive.0" }?.title == "Renamed")
            await client.close()
        }
    }

    @Test func aServerWithoutTheFeedIsAskedForTheWholeCatalogWithItsETag() async throws {
        let catalog =
            #"{"invalid_product_ids":[],"products":[{"content_length":3,"content_version":"1","description":"","file_count":1,"id":"com.example.a","title":"A","type":"non_consumable"}]}"#
        let server = try HostileHTTPServer { request in
            if request.target.contains("since=") {
                return .json(400, #"{"error":{"code":"bad_request","message":"unknown parameter"}}"#)
            }
            let tag = request.headers.first { $0.0.lowercased() == "if-none-match" }?.1
            if tag == "\"v1\"" { return .complete(status: 304, headers: [("ETag", "\"v1\"")], body: Data()) }
            return .json(200, catalog, headers: [("ETag", "\"v1\"")])
        }
        defer { server.stop() }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-nofeed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
        let first = try await client.products().products
        #expect(first.map(\.id) == ["com.example.a"])
        let second = try await client.products().products
        #expect(second == first)
        await client.close()
        #expect(
            server.requests.filter { $0.hasPrefix("GET /v1/products") }
                == ["GET /v1/products", "GET /v1/products", "GET /v1/products"])
    }
}
