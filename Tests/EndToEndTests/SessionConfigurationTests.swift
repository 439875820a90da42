import Foundation
import KioskCore
import KioskKit
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The app's `URLSessionConfiguration` reaches the wire on both of KioskKit's sessions.
@Suite("KioskKit session configuration", .serialized, .timeLimit(.minutes(2)))
struct SessionConfigurationTests {
    typealias Sample = TestServer.Sample

    /// The value of a header in a request head (`\r\n`-separated lines), by case-insensitive name.
    func header(_ name: String, in head: String) -> String? {
        head.split(separator: "\r\n").dropFirst().lazy.compactMap { line -> String? in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == name.lowercased() else { return nil }
            return parts[1].trimmingCharacters(in: .whitespaces)
        }.first
    }

    @Test func theAppsHeaderReachesTheServerOnCatalogAndContentRequests() async throws {
        try await TestServer.with { server in
            let proxy = try LoopbackProxy(to: server.port, recordsRequests: true)
            defer { proxy.stop() }
            let purchase = try await server.buy(Sample.book)
            let session = URLSessionConfiguration.default
            session.httpAdditionalHeaders = ["X-App-Build": "4711"]
            var configuration = KioskClient.Configuration()
            configuration.sessionConfiguration = session
            let client = try await KioskClient(
                serverURL: proxy.baseURL, cacheRoot: server.makeScratchDirectory(), configuration: configuration)
            _ = try await client.products()
            _ = try await client.ensureInstalled(productID: Sample.book, proof: .receipt(purchase.receiptData))
            await client.close()

            let heads = proxy.requestHeads
            let catalog = heads.filter { $0.hasPrefix("GET /v1/products") }
            let content = heads.filter { $0.hasPrefix("GET /v1/content/") }
            #expect(!catalog.isEmpty)
            #expect(!content.isEmpty)
            for head in catalog + content { #expect(header("X-App-Build", in: head) == "4711") }
            // What downloads need wins over the app's settings.
            for head in content { #expect(header("Accept-Encoding", in: head) == "identity") }
        }
    }
}
