import Foundation
import KioskCore
import KioskServer
import Testing

@testable import KioskKit

/// #28 item 1: what a purge of Caches takes is fetched again, alone. A verified file deleted from staging between
/// two runs used to fail the download for good ("the verified file vanished before install"), and `resume` failed
/// the same way at once; only a new download, at the cost of every byte, recovered. A file deleted from installed
/// content made the product not installed, and the next download fetched every file again.
@Suite("Purged files", .serialized, .timeLimit(.minutes(2)))
struct PurgedFilesTests {
    typealias Support = KioskKitTestSupport

    static let product = "com.example.kiosk.test.purged"

    /// A download stopped with `a.bin` and `b.bin` verified in staging and `c.bin` not fetched, as a kill leaves it;
    /// then `b.bin` is purged. Returns the root, the receipt, the files and their hashes.
    static func interruptedDownload(on server: TestServer) async throws
        -> (root: URL, receipt: String, files: [String: Data], hashes: [String: String])
    {
        let files = [
            "Contents/a.bin": Support.randomData(200_000), "Contents/b.bin": Support.randomData(300_000),
            "Contents/c.bin": Support.randomData(400_000),
        ]
        let hashes = try await Support.publish(Self.product, version: "1.0", files: files, on: server)
        let purchase = try await server.buy(Self.product)
        var grant = try await server.grant(Self.product, receipt: purchase.receiptData)
        grant.expiresAt = Date(timeIntervalSince1970: 4_070_908_800)
        let root = server.makeScratchDirectory()
        let layout = CacheLayout(root: root)
        let staged = layout.stagedFile(productID: Self.product, path: "Contents/a.bin")
        try FileManager.default.createDirectory(
            at: staged.deletingLastPathComponent(), withIntermediateDirectories: true)
        try files["Contents/a.bin"]!.write(to: staged)
        // b.bin was verified and staged too, then purged: it is not on disk.
        let record = DownloadRecord(
            id: DownloadID(), productID: Self.product, receipt: purchase.receiptData, priority: .normal,
            sequence: 0, state: .active, attempt: 0, grant: grant, grantReceivedAt: Date(), entityTags: [:],
            verifiedPaths: ["Contents/a.bin", "Contents/b.bin"], integrityFailures: [:], createdAt: Date())
        try Journal(layout: layout).replace(with: JournalSnapshot(nextSequence: 1, downloads: [record]))
        return (root, purchase.receiptData, files, hashes)
    }

    @Test func aPurgedStagedFileIsFetchedAgainAlone() async throws {
        try await TestServer.with { server in
            let (root, _, files, hashes) = try await Self.interruptedDownload(on: server)
            let before = try await Support.settledBytesSent(server)
            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            let content = try await client.waitUntilInstalled(productID: Self.product)
            await client.close()
            try Support.expectInstalled(content, hashes: hashes)
            let sent = try await Support.settledBytesSent(server) - before
            let expected = Int64(files["Contents/b.bin"]!.count + files["Contents/c.bin"]!.count)
            #expect(sent == expected, "sent \(sent), the purged and the missing file are \(expected)")
        }
    }

    /// The product installed with `a.bin`, `b.bin` and `c.bin`, then `b.bin` purged from the installed folder.
    /// Returns the root, the receipt, the files and their hashes.
    static func purgedInstall(on server: TestServer) async throws
        -> (root: URL, receipt: String, files: [String: Data], hashes: [String: String])
    {
        let files = [
            "Contents/a.bin": Support.randomData(200_000), "Contents/b.bin": Support.randomData(300_000),
            "Contents/c.bin": Support.randomData(400_000),
        ]
        let hashes = try await Support.publish(Self.product, version: "1.0", files: files, on: server)
        let purchase = try await server.buy(Self.product)
        let root = server.makeScratchDirectory()
        let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
        let content = try await client.ensureInstalled(
            productID: Self.product, proof: .receipt(purchase.receiptData))
        await client.close()
        try FileManager.default.removeItem(at: content.url(for: "Contents/b.bin"))
        return (root, purchase.receiptData, files, hashes)
    }

    @Test func aFilePurgedFromInstalledContentIsFetchedAgainAlone() async throws {
        try await TestServer.with { server in
            let (root, receipt, files, hashes) = try await Self.purgedInstall(on: server)
            let before = try await Support.settledBytesSent(server)
            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            // Not installed any more: it says so.
            #expect(await client.installedContent(for: Self.product) == nil)
            // The app closes and comes back before asking for it again: what is left is still known.
            await client.close()
            let relaunched = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            let content = try await relaunched.ensureInstalled(productID: Self.product, proof: .receipt(receipt))
            try Support.expectInstalled(content, hashes: hashes)
            let sent = try await Support.settledBytesSent(server) - before
            let purged = Int64(files["Contents/b.bin"]!.count)
            #expect(sent == purged, "sent \(sent), the purged file is \(purged)")
            // Installed again, exactly once: a relaunch finds it intact.
            await relaunched.close()
            let again = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            #expect(await again.installedContent(for: Self.product)?.files == content.files)
            await again.close()
        }
    }

    @Test func removingContentWithAPurgedFileDeletesWhatIsLeft() async throws {
        try await TestServer.with { server in
            let (root, _, _, _) = try await Self.purgedInstall(on: server)
            let folder = CacheLayout(root: root).content(productID: Self.product, version: "1.0")
            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            try await client.remove(Self.product)
            #expect(!FileManager.default.fileExists(atPath: folder.path))
            await #expect(throws: KioskError.notFound(productID: Self.product)) { try await client.remove(Self.product) }
            await client.close()
        }
    }

    @Test func kioskGetFetchesAFilePurgedFromInstalledContentAgainAlone() async throws {
        try await TestServer.with { server in
            let (root, receipt, files, hashes) = try await Self.purgedInstall(on: server)
            let sent = try await Self.kioskGet(on: server, root: root, receipt: receipt, hashes: hashes)
            #expect(sent == Int64(files["Contents/b.bin"]!.count), "sent \(sent)")
        }
    }

    @Test func kioskGetFetchesAPurgedStagedFileAgainAlone() async throws {
        try await TestServer.with { server in
            let (root, receipt, files, hashes) = try await Self.interruptedDownload(on: server)
            let sent = try await Self.kioskGet(on: server, root: root, receipt: receipt, hashes: hashes)
            #expect(sent == Int64(files["Contents/b.bin"]!.count + files["Contents/c.bin"]!.count), "sent \(sent)")
        }
    }

    /// Runs `kiosk get` of the product on `root`, checks that it installs `hashes`, and returns the content bytes
    /// the server sent meanwhile.
    static func kioskGet(on server: TestServer, root: URL, receipt: String, hashes: [String: String]) async throws
        -> Int64
    {
        let before = try await Support.settledBytesSent(server)
        let outcome = try await ChildProcess.runKiosk(
            [
                "get", Self.product, "--receipt", "-", "--server", server.baseURL.absoluteString, "--cache",
                root.path,
            ],
            input: Data(receipt.utf8))
        #expect(outcome.exitStatus == 0, "\(outcome)")
        let folder = CacheLayout(root: root).content(productID: Self.product, version: "1.0")
        for (path, hash) in hashes {
            #expect(try Support.sha256(of: folder.appendingPathComponent(path)) == hash, "\(path)")
        }
        return try await Support.settledBytesSent(server) - before
    }
}
