import Foundation
import KioskCore
import KioskKit
import Testing

/// KioskKit through a network that cuts every connection after a few hundred KiB: retries follow progress, so the
/// download finishes however many cuts it takes.
@Suite("KioskKit on a flaky network", .serialized, .timeLimit(.minutes(3)))
struct KioskKitFlakyNetworkTests {
    typealias Support = KioskKitTestSupport

    static let product = "com.example.kiosk.test.flaky"

    @Test func aDownloadThatKeepsMakingProgressFinishesWhateverTheNumberOfCuts() async throws {
        try await TestServer.with { server in
            let data = Support.randomData(6 << 20)
            let hashes = try await Support.publish(
                Self.product, version: "1", files: ["Contents/issue.pdf": data], on: server)
            let purchase = try await server.buy(Self.product)
            let proxy = try LoopbackProxy(to: server.port, cutAfter: 512 << 10)
            defer { proxy.stop() }
            var configuration = KioskClient.Configuration()
            let attempts = 3
            configuration.retryPolicy = RetryPolicy(baseDelay: 0.01, maximumDelay: 0.05, maximumAttempts: attempts)
            let client = try await KioskClient(
                serverURL: proxy.baseURL, cacheRoot: server.makeScratchDirectory(), configuration: configuration)
            _ = try await client.enqueue(productID: Self.product, receipt: purchase.receiptData)
            let content = try await client.waitUntilInstalled(productID: Self.product)
            #expect(try Support.sha256(of: content.url(for: "Contents/issue.pdf")) == hashes["Contents/issue.pdf"])
            // Many more cuts than attempts allowed in a row: each attempt kept some bytes, so none counted.
            #expect(proxy.cuts > attempts * 3, "\(proxy.cuts) cuts")
            // Resumed after each cut, never started over.
            #expect(proxy.bytesToClient < data.count + data.count / 2, "\(proxy.bytesToClient) bytes for \(data.count)")
            await client.close()
        }
    }

    @Test func aDownloadThatMakesNoProgressStillGivesUp() async throws {
        try await TestServer.with { server in
            try await Support.publish(
                Self.product, version: "1", files: ["Contents/issue.pdf": Support.randomData(1 << 20)], on: server)
            let purchase = try await server.buy(Self.product)
            // Every connection is cut before a byte of content: the grant (a few hundred bytes) gets through only
            // on a connection of its own, and the content never.
            let proxy = try LoopbackProxy(to: server.port, cutAfter: 0)
            defer { proxy.stop() }
            var configuration = KioskClient.Configuration()
            configuration.retryPolicy = RetryPolicy(baseDelay: 0.01, maximumDelay: 0.05, maximumAttempts: 3)
            let client = try await KioskClient(
                serverURL: proxy.baseURL, cacheRoot: server.makeScratchDirectory(), configuration: configuration)
            _ = try await client.enqueue(productID: Self.product, receipt: purchase.receiptData)
            await #expect(throws: KioskError.self) { try await client.waitUntilInstalled(productID: Self.product) }
            #expect(await client.download(for: Self.product)?.state.name == "failed")
            await client.close()
        }
    }
}
