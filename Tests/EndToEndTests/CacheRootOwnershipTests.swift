import Foundation
import KioskCore
import KioskKit
import KioskServer
import Testing

/// #28 item 3: one client per cache root. Two clients used to download into one staging folder; one failed with
/// "could not move the verified file", and a third then saw the product as not installed although its files were
/// on disk. Now the second is refused at once, in this process or another, and nothing of the first's is lost.
@Suite("One client per cache root", .serialized, .timeLimit(.minutes(3)))
struct CacheRootOwnershipTests {
    typealias Support = KioskKitTestSupport

    static let product = "com.example.kiosk.test.owner"

    @Test func aSecondClientOnTheSameRootIsRefusedAndTheFirstFinishes() async throws {
        try await TestServer.with(configure: { $0.faults = .spec(try! FaultSpec(parsing: "throttle=2MiB/s")) }) {
            server in
            let hashes = try await Support.publish(
                Self.product, version: "1.0", files: ["Contents/a.bin": Support.randomData(2 << 20)], on: server)
            let purchase = try await server.buy(Self.product)
            let root = server.makeScratchDirectory()
            let first = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            _ = try await first.enqueue(productID: Self.product, receipt: purchase.receiptData)

            // Also the same root named another way.
            for name in [root, root.appendingPathComponent("sub").appendingPathComponent("..")] {
                do {
                    let second = try await KioskClient(serverURL: server.baseURL, cacheRoot: name)
                    Issue.record("a second client was let in on \(name.path)")
                    await second.close()
                } catch let error as KioskError {
                    #expect(error.code == "cache_root_in_use", "\(error)")
                    #expect(error.description.contains(first.cacheRoot.path), "\(error)")
                }
            }

            let content = try await first.waitUntilInstalled(productID: Self.product)
            try Support.expectInstalled(content, hashes: hashes)
            await first.close()

            // Released by close: the next client opens and finds the content installed.
            let next = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            #expect(await next.installedContent(for: Self.product)?.version == "1.0")
            await next.close()
        }
    }

    @Test func aClientThatGoesAwayReleasesTheRoot() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-owner-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        var client: KioskClient? = try await KioskClient(
            serverURL: URL(string: "http://127.0.0.1:9")!, cacheRoot: root)
        #expect(client != nil)
        client = nil
        let next = try await KioskClient(serverURL: URL(string: "http://127.0.0.1:9")!, cacheRoot: root)
        await next.close()
    }

    /// `kiosk get` on a cache root a client of this process holds exits at once with the error, and writes nothing
    /// there.
    @Test func kioskGetOnARootInUseExitsWithTheError() async throws {
        try await TestServer.with { server in
            try await Support.publish(
                Self.product, version: "1.0", files: ["Contents/a.bin": Support.randomData(1000)], on: server)
            let purchase = try await server.buy(Self.product)
            let root = server.makeScratchDirectory()
            let holder = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            let before = try FileManager.default.contentsOfDirectory(atPath: root.path).sorted()
            let outcome = try await ChildProcess.runKiosk(
                [
                    "get", Self.product, "--receipt", "-", "--server", server.baseURL.absoluteString, "--cache",
                    root.path,
                ],
                input: Data(purchase.receiptData.utf8))
            #expect(outcome.exitStatus == 1, "\(outcome)")
            #expect(outcome.standardError.contains("Another KioskClient has the cache root"), "\(outcome)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).sorted() == before)
            await holder.close()
        }
    }
}
