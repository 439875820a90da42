import Foundation
import KioskCore
import KioskServer
import Testing

@testable import KioskKit

/// Products of many small files: the work per file is constant, the journal commits in groups, installed content
/// is checked per product (#16).
@Suite("KioskKit: many-file products", .serialized, .timeLimit(.minutes(5)))
struct ManyFilesTests {
    typealias Support = KioskKitTestSupport

    static let product = "com.example.kiosk.test.many"

    /// The paths of the `count` files ``publish(_:count:size:)`` publishes, by index.
    static func paths(count: Int) -> [String] { (0..<count).map { "Contents/folder-\($0 / 50)/file-\($0).bin" } }

    /// Publishes `count` files of `size` bytes, 50 to a folder.
    @discardableResult
    func publish(_ server: TestServer, count: Int, size: Int = 1024) async throws -> [String: String] {
        let block = Support.randomData(size + count)
        var files: [String: Data] = [:]
        for (index, path) in Self.paths(count: count).enumerated() {
            files[path] = block.subdata(in: index..<(index + size))
        }
        return try await Support.publish(Self.product, version: "1.0", files: files, on: server)
    }

    func makeClient(_ server: TestServer, fileSystem: CountingFileSystem, root: URL? = nil) async throws
        -> KioskClient
    {
        try await KioskKitTestSupport.makeClient(server.baseURL, root: root ?? server.makeScratchDirectory()) {
            $0.fileSystem = fileSystem
        }
    }

    /// Downloads a product of `count` files and returns the file-system calls the client made.
    func callsToDownload(_ count: Int) async throws -> [CountingFileSystem.Call: Int] {
        try await TestServer.with { server in
            try await publish(server, count: count)
            let purchase = try await server.buy(Self.product)
            let fileSystem = CountingFileSystem()
            let client = try await makeClient(server, fileSystem: fileSystem)
            try await client.enqueue(productID: Self.product, receipt: purchase.receiptData)
            let content = try await client.waitUntilInstalled(productID: Self.product)
            #expect(content.files.count == count)
            await client.close()
            return fileSystem.snapshot
        }
    }

    @Test func theFileSystemCallsPerFileDoNotGrowWithTheFileCount() async throws {
        let small = try await callsToDownload(100)
        let large = try await callsToDownload(1_000)
        // The journal's writes and fsyncs come per group commit, and how many files share one depends on timing.
        let perGroup: Set<CountingFileSystem.Call> = [.write, .synchronize, .synchronizeDirectory]
        for call in CountingFileSystem.Call.allCases {
            let perFileSmall = Double(small[call, default: 0]) / 100
            let perFileLarge = Double(large[call, default: 0]) / 1_000
            print("file-system calls per file, \(call.rawValue): 100 files \(perFileSmall), 1000 files \(perFileLarge)")
            if perGroup.contains(call) {
                // One write and one fsync of each file's own bytes, plus at most one more per file for the journal.
                #expect(perFileLarge <= 2, "\(call.rawValue)")
            } else {
                // Linear with a fixed overhead: the overhead weighs less on more files. A scan of the product per
                // file would make the 1,000-file figure ten times the 100-file one.
                #expect(perFileLarge <= perFileSmall * 1.05 + 0.02, "\(call.rawValue)")
            }
        }
        let total = { (calls: [CountingFileSystem.Call: Int]) in Double(calls.values.reduce(0, +)) }
        print("file-system calls per file, all: 100 files \(total(small) / 100), 1000 files \(total(large) / 1_000)")
        #expect(total(large) / 1_000 < 12)
    }

    @Test func fiveThousandSmallFilesDownloadCompletelyAndVerified() async throws {
        try await TestServer.with { server in
            let hashes = try await publish(server, count: 5_000, size: 512)
            let purchase = try await server.buy(Self.product)
            let client = try await makeClient(server, fileSystem: CountingFileSystem())
            try await client.enqueue(productID: Self.product, receipt: purchase.receiptData)
            let content = try await client.waitUntilInstalled(productID: Self.product)
            try Support.expectInstalled(content, hashes: hashes)
            #expect(await client.download(for: Self.product)?.progress.fraction == 1)
            await client.close()
        }
    }

    // MARK: - Reconcile per product

    /// A client with the product of `count` files installed, and its file system (counts reset).
    func installed(_ server: TestServer, count: Int) async throws -> (KioskClient, CountingFileSystem, InstalledContent)
    {
        try await publish(server, count: count)
        let purchase = try await server.buy(Self.product)
        let fileSystem = CountingFileSystem()
        let client = try await makeClient(server, fileSystem: fileSystem)
        try await client.enqueue(productID: Self.product, receipt: purchase.receiptData)
        let content = try await client.waitUntilInstalled(productID: Self.product)
        fileSystem.reset()
        return (client, fileSystem, content)
    }

    @Test func intactContentCostsOneStatPerFolder() async throws {
        try await TestServer.with { server in
            let (client, fileSystem, content) = try await installed(server, count: 500)
            #expect(await client.installedContent() == [content])
            #expect(try await client.waitUntilInstalled(productID: Self.product) == content)
            // 10 folders of files, `Contents` and the version folder, twice.
            #expect(fileSystem.snapshot == [.status: 2 * 12])
            await client.close()

            // A relaunch reads the marker and checks per folder too.
            let reopened = try await makeClient(server, fileSystem: fileSystem, root: client.cacheRoot)
            fileSystem.reset()
            #expect(await reopened.installedContent().map(\.files) == [content.files])
            #expect(fileSystem.count(.status) == 12)
            await reopened.close()
        }
    }

    @Test func aFileDeletedInANestedFolderIsNoticed() async throws {
        try await TestServer.with { server in
            let (client, _, content) = try await installed(server, count: 200)
            try FileManager.default.removeItem(at: content.url(for: "Contents/folder-3/file-170.bin"))
            #expect(await client.installedContent(for: Self.product) == nil)
            await #expect(throws: KioskError.notFound(productID: Self.product)) {
                try await client.waitUntilInstalled(productID: Self.product)
            }
            await client.close()
        }
    }

    @Test func aReplacedFolderIsCheckedFileByFile() async throws {
        try await TestServer.with { server in
            let (client, fileSystem, content) = try await installed(server, count: 200)
            // The same files in a new folder: the markers no longer match, every file is checked, all is well.
            let folder = content.url(for: "Contents/folder-1")
            let copy = content.directory.appendingPathComponent("copy")
            try FileManager.default.copyItem(at: folder, to: copy)
            try FileManager.default.removeItem(at: folder)
            try FileManager.default.moveItem(at: copy, to: folder)
            #expect(await client.installedContent(for: Self.product) == content)
            #expect(fileSystem.count(.status) >= 200)
            // The new marker makes the next check cheap again.
            fileSystem.reset()
            #expect(await client.installedContent(for: Self.product) == content)
            #expect(fileSystem.count(.status) == 6)  // 4 folders of files, `Contents`, the version folder

            // A folder replaced by one with a file cut short is damaged.
            try FileManager.default.copyItem(at: folder, to: copy)
            try Data("short".utf8).write(to: copy.appendingPathComponent("file-60.bin"))
            try FileManager.default.removeItem(at: folder)
            try FileManager.default.moveItem(at: copy, to: folder)
            #expect(await client.installedContent(for: Self.product) == nil)
            await client.close()
        }
    }

    // MARK: - Group commit

    @Test func severalAppendsShareOneFsyncAndTheirWaitersResumeAfterIt() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-group-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let fileSystem = CountingFileSystem()
        let journal = Journal(layout: CacheLayout(root: root), fileSystem: fileSystem)
        try journal.replace(with: JournalSnapshot())
        let record = DownloadRecord(
            id: DownloadID(), productID: Self.product, receipt: "r", priority: .normal, sequence: 0, state: .waiting,
            attempt: 0, grant: nil, entityTags: [:], verifiedPaths: [], integrityFailures: [:], createdAt: Date())
        fileSystem.reset()

        // Hold the writer in its first fsync while more files are verified.
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        fileSystem.beforeSynchronize.withLock { hook in
            hook = {
                fileSystem.beforeSynchronize.withLock { $0 = nil }
                entered.signal()
                release.wait()
            }
        }
        journal.append([.created(record)])
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                entered.wait()
                continuation.resume()
            }
        }
        let verified = (0..<8).map { "Contents/file-\($0).bin" }
        for path in verified { journal.append([.changed(id: record.id, .verified(path: path))], syncing: root) }
        let syncsSeenByWaiters = Locked<[Int]>([])
        let waiters = (0..<verified.count).map { _ in
            Task {
                await journal.waitUntilDurable()
                let syncs = fileSystem.count(.synchronize)
                syncsSeenByWaiters.withLock { $0.append(syncs) }
            }
        }
        #expect(syncsSeenByWaiters.withLock { $0 }.isEmpty)  // the writer is held: nobody may resume
        release.signal()
        for waiter in waiters { await waiter.value }
        // Two fsyncs of the log for nine appends: the first alone, the eight held ones together (and one fsync of
        // the folder they named). Every waiter resumed after the fsync that covered it.
        #expect(fileSystem.count(.synchronize) == 2)
        #expect(fileSystem.count(.synchronizeDirectory) == 1)
        #expect(syncsSeenByWaiters.withLock { $0 } == Array(repeating: 2, count: verified.count))
        #expect(Journal(layout: CacheLayout(root: root)).load().0.downloads.first?.verifiedPaths == Set(verified))
    }
}
