import Foundation
import KioskCore
import KioskServer
import Testing

@testable import KioskKit

/// Several files of one download in flight at once, within the client's connection budget (#16).
@Suite("KioskKit: many files in flight", .serialized, .timeLimit(.minutes(5)))
struct ManyFilesInFlightTests {
    typealias Support = KioskKitTestSupport

    static let product = "com.example.kiosk.test.inflight"

    /// Publishes `count` files of `size` bytes, 50 to a folder; returns their SHA-256 by path.
    func publish(_ server: TestServer, count: Int, size: Int) async throws -> [String: String] {
        let block = Support.randomData(size + count)
        var files: [String: Data] = [:]
        for index in 0..<count {
            files["Contents/folder-\(index / 50)/file-\(index).bin"] = block.subdata(in: index..<(index + size))
        }
        return try await Support.publish(Self.product, version: "1.0", files: files, on: server)
    }

    func makeClient(_ server: TestServer, writers: ObservedWriters, connections: Int) async throws -> KioskClient {
        try await KioskKitTestSupport.makeClient(server.baseURL, root: server.makeScratchDirectory()) {
            $0.fileWriterFactory = writers.factory
            $0.maximumConnections = connections
        }
    }

    @Test func twoThousandSmallFilesAreFetchedSeveralAtATimeWithinTheBudget() async throws {
        // In four runs of the product's pack (512 files each), all four in flight at once.
        try await TestServer.with { server in
            let hashes = try await publish(server, count: 2_000, size: 700)
            let purchase = try await server.buy(Self.product)
            let writers = ObservedWriters(delay: 0.002)
            let client = try await makeClient(server, writers: writers, connections: 4)
            try await client.enqueue(productID: Self.product, receipt: purchase.receiptData)
            let content = try await client.waitUntilInstalled(productID: Self.product)
            try Support.expectInstalled(content, hashes: hashes)
            #expect(writers.bytes == 2_000 * 700, "a byte written twice, or one missing")
            #expect(writers.most > 1, "files were fetched one at a time")
            #expect(writers.most <= 4, "more files in flight than the budget allows")
            await client.close()
        }
    }

    @Test func aBudgetOfOneFetchesOneFileAtATime() async throws {
        try await TestServer.with { server in
            let hashes = try await publish(server, count: 200, size: 700)
            let purchase = try await server.buy(Self.product)
            let writers = ObservedWriters(delay: 0.002)
            let client = try await makeClient(server, writers: writers, connections: 1)
            try await client.enqueue(productID: Self.product, receipt: purchase.receiptData)
            try Support.expectInstalled(try await client.waitUntilInstalled(productID: Self.product), hashes: hashes)
            #expect(writers.most == 1)
            await client.close()
        }
    }

    @Test func aBudgetBelowOneIsRefused() async throws {
        var configuration = KioskClient.Configuration()
        configuration.maximumConnections = 0
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-budget-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        await #expect(throws: KioskError.self) {
            _ = try await KioskClient(
                serverURL: URL(string: "http://127.0.0.1:9")!, cacheRoot: root, configuration: configuration)
        }
    }

    /// Starts a slow download of 1,000 files and waits until some are verified and several are in flight. Past 50
    /// files each write waits 200 ms (8 at a time: 24 s for the rest), so that the download is still on its way
    /// when the test acts on it, however loaded the machine (at 50 ms a loaded CI machine once finished it before the
    /// pause); `writers.pace.set(0)` lets it finish.
    func startSlowDownload(_ server: TestServer) async throws -> (KioskClient, ObservedWriters, [String: String]) {
        let hashes = try await publish(server, count: 1_000, size: 700)
        let purchase = try await server.buy(Self.product)
        let writers = ObservedWriters(pace: WritePace(0.01, slowing: (after: 50 * 700, to: 0.2)))
        let client = try await makeClient(server, writers: writers, connections: 8)
        try await client.enqueue(productID: Self.product, receipt: purchase.receiptData)
        try await Support.eventually("several files in flight") { writers.total > 40 && writers.most > 1 }
        return (client, writers, hashes)
    }

    @Test func pauseStopsEveryFileInFlightAndResumeFinishesVerified() async throws {
        try await TestServer.with { server in
            let (client, writers, hashes) = try await startSlowDownload(server)
            try await client.pause(Self.product)
            // Pause returns once the transfer ended: no file is being written any more, and none starts.
            #expect(writers.now == 0)
            let written = writers.total
            #expect(written < 1_000)
            let sent = try await Support.settledBytesSent(server)
            #expect(writers.total == written)
            #expect(try await Support.settledBytesSent(server) == sent)
            #expect(await client.download(for: Self.product)?.state == .paused(.user))

            writers.pace.set(0)
            try await client.resume(Self.product)
            let content = try await client.waitUntilInstalled(productID: Self.product)
            try Support.expectInstalled(content, hashes: hashes)
            await client.close()
        }
    }

    @Test func cancelStopsEveryFileInFlightAndDeletesThem() async throws {
        try await TestServer.with { server in
            let (client, writers, _) = try await startSlowDownload(server)
            try await client.cancel(Self.product)
            #expect(writers.now == 0)
            let written = writers.total
            _ = try await Support.settledBytesSent(server)
            #expect(writers.total == written)
            #expect(await client.download(for: Self.product)?.state == .cancelled)
            let staging = CacheLayout(root: client.cacheRoot).staging(productID: Self.product)
            #expect(!FileManager.default.fileExists(atPath: staging.path))
            await client.close()
        }
    }
}
