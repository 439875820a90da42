import Foundation
import KioskCore
import Testing

@testable import KioskKit

extension HostileServerTests {
    // MARK: - #27 flaw 2: an endless change feed

    /// A page of removed IDs about 1 MiB long that always names a next page.
    static let endlessFeedPage: String = {
        let ids = (0..<5_000).map { "\"com.example.removed.\(String(repeating: "x", count: 180)).\($0)\"" }
        return """
            {"kind":"changes","catalog_etag":"\\"v2\\"","added":[],"changed":[],"products":[],
             "removed":[\(ids.joined(separator: ","))],"next_cursor":"more"}
            """
    }()

    /// The first run of `kiosk products` keeps the catalog; the second walks the feed since its tag, and the feed
    /// never ends: page after page of 1 MiB `removed` lists (the server gives up after 300 pages, so that a client
    /// without a bound ends too). The walk used to keep every page until the end (20,000 pages allowed): about
    /// 74 MiB more a page for large pages. Now it folds each page and stops at the byte bound, twice the 16 MiB
    /// response limit, after about 32 pages, in a child process whose memory is its own.
    @Test func anEndlessChangeFeedStopsAtTheWalksByteBoundInBoundedMemory() async throws {
        let catalog = """
            {"products":[{"id":"\(Self.product)","type":"non_consumable","title":"Issue","description":"",
             "content_version":"1.0","content_length":3,"file_count":1}],"invalid_product_ids":[]}
            """
        let feedPages = Locked(0)
        let server = try HostileHTTPServer { request in
            guard request.path == "/v1/products" else { return .json(404, "{}") }
            guard request.target.contains("since=") else { return .json(200, catalog, headers: [("ETag", "\"v1\"")]) }
            let served = feedPages.withLock { count -> Int in
                count += 1
                return count
            }
            return served > 300 ? .json(500, "{}") : .json(200, Self.endlessFeedPage)
        }
        defer { server.stop() }
        let cache = Self.scratch()
        defer { try? FileManager.default.removeItem(at: cache) }
        let arguments = ["products", "--server", server.baseURL.absoluteString, "--cache", cache.path]
        let first = try await ChildProcess.runKiosk(arguments)
        #expect(first.exitStatus == 0, "\(first)")

        let walk = try await ChildProcess.runKiosk(arguments, memoryCap: 1 << 30)
        let pages = feedPages.withLock { $0 }
        print("kiosk products against an endless feed: \(pages) pages, \(walk)")
        #expect(walk.exitStatus == 1, "\(walk)")
        #expect(walk.standardError.contains("32 MiB"), "\(walk)")
        #expect(pages <= 34, "the walk took \(pages) pages of 1 MiB")
        #expect(walk.peakRSS < 160 << 20, "\(walk)")
        // The copy kept by the first run is still the catalog it was.
        #expect(CatalogMirror.load(from: CacheLayout(root: cache).catalogMirror, fileSystem: POSIXFileSystem())?
            .catalogETag == "\"v1\"")
    }
}
