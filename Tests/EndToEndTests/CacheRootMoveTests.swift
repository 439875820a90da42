import Foundation
import KioskCore
import KioskKit
import KioskServer
import Testing

/// #28 item 4: the journal used to keep absolute paths, so a cache root that moved (on iOS the app container's path
/// changes with reinstalls, restores and some updates) lost everything installed, and `ensureInstalled` fetched it
/// all again next to identical files; a copied root pointed into the old one. Now the journal is relative to the
/// root: a moved or copied root keeps its content, and nothing is fetched.
@Suite("A moved or copied cache root", .serialized, .timeLimit(.minutes(3)))
struct CacheRootMoveTests {
    typealias Support = KioskKitTestSupport

    static let product = "com.example.kiosk.test.moved"

    /// Installs ``product`` (two files) into a new root and closes the client; returns the root, the receipt and
    /// the files' hashes.
    static func installed(on server: TestServer) async throws -> (root: URL, receipt: String, [String: String]) {
        let hashes = try await Support.publish(
            product, version: "1.0",
            files: ["Contents/a.bin": Support.randomData(300_000), "Contents/b/c.bin": Support.randomData(1000)],
            on: server)
        let purchase = try await server.buy(product)
        let root = server.makeScratchDirectory()
        let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
        _ = try await client.ensureInstalled(productID: product, proof: .receipt(purchase.receiptData))
        await client.close()
        return (root, purchase.receiptData, hashes)
    }

    @Test(arguments: ["moved", "copied"])
    func aRelocatedRootKeepsItsContentAndFetchesNothing(_ how: String) async throws {
        try await TestServer.with { server in
            let (root, receipt, hashes) = try await Self.installed(on: server)
            let place = server.makeScratchDirectory()
            if how == "moved" {
                try FileManager.default.moveItem(at: root, to: place)
            } else {
                try FileManager.default.copyItem(at: root, to: place)
            }
            let sentBefore = try await Support.settledBytesSent(server)

            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: place)
            let found = try #require(await client.installedContent(for: Self.product))
            #expect(found.directory.standardizedFileURL.path.hasPrefix(place.standardizedFileURL.path), "\(found)")
            let content = try await client.ensureInstalled(productID: Self.product, proof: .receipt(receipt))
            try Support.expectInstalled(content, hashes: hashes)
            #expect(content.directory.standardizedFileURL.path.hasPrefix(place.standardizedFileURL.path))
            await client.close()
            #expect(try await Support.settledBytesSent(server) == sentBefore, "the \(how) root fetched content again")
            if how == "copied" {
                // The copy stands alone: the original's removal takes nothing from it.
                try FileManager.default.removeItem(at: root)
                let again = try await KioskClient(serverURL: server.baseURL, cacheRoot: place)
                #expect(await again.installedContent(for: Self.product)?.version == "1.0")
                await again.close()
            }
        }
    }

    /// The same through `kiosk get`: on a moved root it prints the installed folder under the new root and fetches
    /// nothing.
    @Test func kioskGetOnAMovedRootFetchesNothing() async throws {
        try await TestServer.with { server in
            let (root, receipt, _) = try await Self.installed(on: server)
            let place = server.makeScratchDirectory()
            try FileManager.default.moveItem(at: root, to: place)
            let sentBefore = try await Support.settledBytesSent(server)
            let outcome = try await ChildProcess.runKiosk(
                [
                    "get", Self.product, "--receipt", "-", "--server", server.baseURL.absoluteString, "--cache",
                    place.path,
                ],
                input: Data(receipt.utf8))
            #expect(outcome.exitStatus == 0, "\(outcome)")
            let printed = outcome.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(
                URL(fileURLWithPath: printed).standardizedFileURL.path.hasPrefix(place.standardizedFileURL.path),
                "\(outcome)")
            #expect(try await Support.settledBytesSent(server) == sentBefore)
        }
    }

    /// A cache root as KioskKit wrote it at c8cc5f8 (Fixtures/cache-root-c8cc5f8: absolute paths in the journal,
    /// into an app container that no longer exists, and the installation ID in the root), opened where it is now:
    /// its content is installed, its installation ID the same, and the journal is rewritten relative.
    @Test func aRootWrittenWithAbsolutePathsOpensWithEverythingInstalled() async throws {
        let fixture = try #require(Bundle.module.resourceURL).appendingPathComponent("Fixtures/cache-root-c8cc5f8")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-c8cc5f8-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.copyItem(at: fixture, to: root)
        let server = URL(string: "http://127.0.0.1:9")!  // nothing is asked of a server
        let store = root.deletingLastPathComponent().appendingPathComponent("kiosk-ids-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: store) }
        var configuration = KioskClient.Configuration()
        configuration.installationIdentity = .stored(in: store)

        let client = try await KioskClient(serverURL: server, cacheRoot: root, configuration: configuration)
        let content = try #require(await client.installedContent(for: "com.example.kiosk.legacy"))
        #expect(content.version == "1.0")
        #expect(try Data(contentsOf: content.url(for: "Contents/issue.pdf")) == Data("legacy issue".utf8))
        #expect(client.installationID == "3f2a9c1e-7b4d-4e8a-9c0f-1d2e3f4a5b6c")
        await client.close()
        // The ID now lives out of the cache root, where a purge of Caches leaves it.
        let kept = try String(contentsOf: store.appendingPathComponent("installation-id"), encoding: .utf8)
        #expect(kept == "3f2a9c1e-7b4d-4e8a-9c0f-1d2e3f4a5b6c")

        let journal = try String(contentsOf: root.appendingPathComponent("journal.json"), encoding: .utf8)
        #expect(!journal.contains("/var/mobile/"), "\(journal)")
        #expect(journal.contains("Content/com.example.kiosk.legacy/1.0"), "\(journal)")
    }
}
