import Foundation
import KioskCore
import Testing

@testable import KioskKit

extension JournalSnapshot {
    /// What the snapshot says, without its format and log generation.
    var state: JournalSnapshot {
        JournalSnapshot(nextSequence: nextSequence, downloads: downloads, installed: installed)
    }
}

@Suite("Journal")
struct JournalTests {
    let root: URL
    let journal: Journal

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        journal = Journal(layout: CacheLayout(root: root))
    }

    func sample(_ count: Int = 2) -> JournalSnapshot {
        let grant = Grant(
            productID: "com.example.a", contentVersion: "1.0", totalLength: 30,
            expiresAt: Date(timeIntervalSince1970: 1_900_000_000), token: "t",
            files: [
                GrantFile(
                    path: "Contents/a.bin", length: 30, sha256: String(repeating: "a", count: 64),
                    url: "/v1/content/com.example.a/1.0/Contents/a.bin")
            ])
        let downloads = (0..<count).map { index in
            DownloadRecord(
                id: DownloadID(), productID: "com.example.p\(index)", receipt: "cmVjZWlwdA==",
                priority: .normal, sequence: UInt64(index),
                state: index == 0 ? .paused(.insufficientStorage) : .failed(.journal("x")), attempt: index,
                grant: grant, entityTags: ["Contents/a.bin": "\"abc\""], verifiedPaths: ["Contents/a.bin"],
                integrityFailures: [:], createdAt: Date(timeIntervalSince1970: 1_800_000_000))
        }
        let installed = InstalledContent(
            productID: "com.example.b", version: "2.0",
            directory: CacheLayout(root: root).content(productID: "com.example.b", version: "2.0"),
            files: [InstalledFile(path: "x", length: 3, sha256: "")],
            installedAt: Date(timeIntervalSince1970: 1_800_000_000))
        return JournalSnapshot(nextSequence: UInt64(count), downloads: downloads, installed: [installed])
    }

    @Test func roundTrip() throws {
        let snapshot = sample()
        try journal.replace(with: snapshot)
        let (loaded, recovery) = journal.load()
        #expect(recovery == .loaded)
        #expect(loaded.state == snapshot.state)
        #expect(!FileManager.default.fileExists(atPath: journal.temporaryURL.path))
    }

    @Test func proofsOfEitherKindRoundTripAndOldRecordsReadAsReceipts() throws {
        var snapshot = sample()
        snapshot.downloads[1].proof = .signedTransaction("eyJ.eyJ.sig")
        try journal.replace(with: snapshot)
        let (loaded, _) = journal.load()
        #expect(loaded.downloads.map(\.proof) == [.receipt("cmVjZWlwdA=="), .signedTransaction("eyJ.eyJ.sig")])
        // A record written before signed transactions existed has only "receipt".
        var old =
            try JSONSerialization.jsonObject(with: try JSONEncoder().encode(snapshot.downloads[0])) as! [String: Any]
        old.removeValue(forKey: "signedTransaction")
        let record = try JSONDecoder().decode(
            DownloadRecord.self, from: try JSONSerialization.data(withJSONObject: old))
        #expect(record.proof == .receipt("cmVjZWlwdA=="))
    }

    @Test func missingJournalIsAFreshStart() {
        let (loaded, recovery) = journal.load()
        #expect(recovery == .fresh)
        #expect(loaded.downloads.isEmpty && loaded.installed.isEmpty)
    }

    /// #28 item 4: installed content in the caches is kept relative to the root, content the app moved out of the
    /// caches by its own path; a journal read from another root finds the content under that root.
    @Test func installedContentIsKeptRelativeToTheRoot() throws {
        var snapshot = sample()
        let outside = URL(fileURLWithPath: "/var/app/Documents/com.example.c", isDirectory: true)
        snapshot.installed.append(
            InstalledContent(
                productID: "com.example.c", version: "1.0", directory: outside, files: [],
                installedAt: Date(timeIntervalSince1970: 1_800_000_000), isOutsideCaches: true))
        try journal.replace(with: snapshot)
        let written = try String(contentsOf: journal.url, encoding: .utf8)
        #expect(written.contains("\"Content/com.example.b/2.0\""))
        #expect(!written.contains(root.path))
        #expect(written.contains("/var/app/Documents/com.example.c"))

        let elsewhere = FileManager.default.temporaryDirectory
            .appendingPathComponent("kiosk-moved-\(UUID().uuidString)")
        try FileManager.default.moveItem(at: root, to: elsewhere)
        defer { try? FileManager.default.moveItem(at: elsewhere, to: root) }
        let (loaded, _) = Journal(layout: CacheLayout(root: elsewhere)).load()
        #expect(
            loaded.installed.first { $0.productID == "com.example.b" }?.directory
                == CacheLayout(root: elsewhere).content(productID: "com.example.b", version: "2.0"))
        #expect(loaded.installed.first { $0.productID == "com.example.c" }?.directory == outside)
    }

    @Test func secondSaveKeepsThePreviousCopy() throws {
        let first = sample(1)
        let second = sample(2)
        try journal.replace(with: first)
        try journal.replace(with: second)
        #expect(journal.read(journal.previousURL)?.resolved(in: journal.layout).state == first.state)
        #expect(journal.read(journal.url)?.resolved(in: journal.layout).state == second.state)
    }

    @Test(arguments: ["truncated", "garbage", "empty", "wrongShape"])
    func tornJournalFallsBackToThePreviousCopy(_ damage: String) throws {
        let first = sample(1)
        try journal.replace(with: first)
        try journal.replace(with: sample(2))
        let data = try Data(contentsOf: journal.url)
        switch damage {
        case "truncated": try data.prefix(data.count / 2).write(to: journal.url)
        case "garbage": try Data((0..<500).map { _ in UInt8.random(in: 0...255) }).write(to: journal.url)
        case "empty": try Data().write(to: journal.url)
        default: try Data(#"{"format": 1, "downloads": 3}"#.utf8).write(to: journal.url)
        }
        let (loaded, recovery) = journal.load()
        #expect(recovery == .previousCopy)
        #expect(loaded.state == first.state)
    }

    @Test func renameTornBetweenKeepAndReplaceUsesThePreviousCopy() throws {
        // The crash happened after journal.json became journal.prev.json and before the temp file was renamed.
        let first = sample(1)
        try journal.replace(with: first)
        try FileManager.default.moveItem(at: journal.url, to: journal.previousURL)
        try Data("{\"partial".utf8).write(to: journal.temporaryURL)
        let (loaded, recovery) = journal.load()
        #expect(recovery == .previousCopy)
        #expect(loaded.state == first.state)
        #expect(!FileManager.default.fileExists(atPath: journal.temporaryURL.path))
    }

    @Test func tempFileLeftBehindIsIgnoredAndRemoved() throws {
        let snapshot = sample()
        try journal.replace(with: snapshot)
        try Data("half a journal".utf8).write(to: journal.temporaryURL)
        let (loaded, recovery) = journal.load()
        #expect(recovery == .loaded)
        #expect(loaded.state == snapshot.state)
        #expect(!FileManager.default.fileExists(atPath: journal.temporaryURL.path))
    }

    @Test func bothCopiesCorruptRebuildsInstalledContentFromDisk() throws {
        try journal.replace(with: sample())
        try journal.replace(with: sample())
        try Data("garbage".utf8).write(to: journal.url)
        try Data("garbage".utf8).write(to: journal.previousURL)
        let layout = CacheLayout(root: root)
        let folder = layout.content(productID: "com.example.c", version: "3.0")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("Contents"),
            withIntermediateDirectories: true)
        try Data("hello".utf8).write(to: folder.appendingPathComponent("Contents/a.txt"))
        let (loaded, recovery) = journal.load()
        #expect(recovery == .rebuiltFromDisk)
        #expect(loaded.downloads.isEmpty)
        #expect(loaded.installed.count == 1)
        #expect(loaded.installed.first?.productID == "com.example.c")
        #expect(loaded.installed.first?.version == "3.0")
        #expect(loaded.installed.first?.files == [InstalledFile(path: "Contents/a.txt", length: 5, sha256: "")])
    }

    /// A journal written by the release before the log (format 1, one JSON snapshot) still loads.
    @Test func format1JournalOfThePreviousReleaseLoads() throws {
        let fixture = try #require(
            Bundle.module.url(forResource: "journal-format1", withExtension: "json", subdirectory: "Fixtures"))
        try FileManager.default.copyItem(at: fixture, to: journal.url)
        let (loaded, recovery) = journal.load()
        #expect(recovery == .loaded)
        #expect(loaded.nextSequence == 5)
        let download = try #require(loaded.downloads.first)
        #expect(download.id.rawValue.uuidString == "11111111-2222-3333-4444-555555555555")
        #expect(download.state == .active && download.attempt == 2 && download.priority == .high)
        #expect(download.proof == .receipt("cmVjZWlwdA=="))
        #expect(download.grant?.files.count == 3 && download.grant?.token == "token-1")
        #expect(download.verifiedPaths == ["Contents/level-0.bin"])
        #expect(download.entityTags == ["Contents/level-0.bin": "\"e0\"", "Contents/level-1.bin": "\"e1\""])
        #expect(download.integrityFailures == ["Contents/level-1.bin": 1])
        #expect(loaded.installed.map(\.productID) == ["com.example.magazine"])
        #expect(loaded.installed.first?.files.first?.length == 12)
    }

    /// A journal written by the release before chunks (format 2: a snapshot and its log, without chunk records) still
    /// loads, and a chunk record appended to it afterwards replays.
    @Test func format2JournalOfThePreviousReleaseLoads() async throws {
        for name in ["json", "log"] {
            let fixture = try #require(
                Bundle.module.url(forResource: "journal-format2", withExtension: name, subdirectory: "Fixtures"))
            try FileManager.default.copyItem(at: fixture, to: name == "json" ? journal.url : journal.logURL)
        }
        let (loaded, recovery) = journal.load()
        #expect(recovery == .loaded)
        let download = try #require(loaded.downloads.first)
        #expect(download.state == .active && download.attempt == 2 && download.priority == .high)
        #expect(download.grant?.files.count == 3 && download.grant?.chunking == nil)
        #expect(download.verifiedPaths == ["Contents/level-0.bin"] && download.verifiedChunks.isEmpty)
        #expect(download.entityTags == ["Contents/level-0.bin": "\"e0\""])
        #expect(download.integrityFailures == ["Contents/level-1.bin": 1])
        #expect(loaded.installed.map(\.productID) == ["com.example.magazine"])
        // The new release goes on appending to it.
        journal.append([.changed(id: download.id, .chunkVerified(path: "Contents/level-2.bin", index: 0))])
        await journal.waitUntilDurable()
        let (reloaded, _) = Journal(layout: journal.layout).load()
        #expect(reloaded.downloads.first?.verifiedChunks == ["Contents/level-2.bin": [0]])
    }

    @Test func newerFormatIsNotMisread() throws {
        try Data(#"{"format": 99, "nextSequence": 0, "downloads": [], "installed": []}"#.utf8).write(to: journal.url)
        let (_, recovery) = journal.load()
        #expect(recovery == .rebuiltFromDisk)
    }
}

@Suite("Reconcile and grant renewal")
struct ReconcileAndRenewalTests {
    func content(_ files: [(String, Int64)]) -> InstalledContent {
        InstalledContent(
            productID: "p", version: "1", directory: URL(fileURLWithPath: "/c/p/1"),
            files: files.map { InstalledFile(path: $0.0, length: $0.1, sha256: "") }, installedAt: Date())
    }

    @Test func intactWhenEveryFileHasItsSize() {
        let sizes = ["/c/p/1/a": Int64(3), "/c/p/1/b/c": 5]
        let verdict = ContentReconciler.check(content([("a", 3), ("b/c", 5)])) { sizes[$0.path] }
        #expect(verdict == .intact)
    }

    @Test func missingOrTruncatedFilesAreDamaged() {
        let sizes = ["/c/p/1/a": Int64(2)]
        let verdict = ContentReconciler.check(content([("a", 3), ("b", 5)])) { sizes[$0.path] }
        #expect(verdict == .damaged(missing: ["a", "b"]))
    }

    @Test func reconcileSplits() {
        let good = content([("a", 1)])
        var gone = content([("z", 1)])
        gone.productID = "q"
        let (intact, vanished) = ContentReconciler.reconcile([good, gone]) { $0.path == "/c/p/1/a" ? 1 : nil }
        #expect(intact == [good])
        #expect(vanished == [gone])
    }

    @Test func reconcileOnRealDisk() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-rec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try Data("abc".utf8).write(to: root.appendingPathComponent("a"))
        let item = InstalledContent(
            productID: "p", version: "1", directory: root,
            files: [InstalledFile(path: "a", length: 3, sha256: "")], installedAt: Date())
        #expect(ContentReconciler.check(item, fileSize: ContentReconciler.diskFileSize) == .intact)
        try FileManager.default.removeItem(at: root.appendingPathComponent("a"))
        #expect(ContentReconciler.check(item, fileSize: ContentReconciler.diskFileSize) == .damaged(missing: ["a"]))
    }

    func grant(_ version: String, _ files: [(String, Int64, String)]) -> Grant {
        Grant(
            productID: "p", contentVersion: version, totalLength: files.reduce(0) { $0 + $1.1 },
            expiresAt: Date(), token: "t",
            files: files.map {
                GrantFile(path: $0.0, length: $0.1, sha256: $0.2, url: "/v1/content/p/\(version)/\($0.0)")
            })
    }

    @Test func sameVersionKeepsEverything() {
        let old = grant("1", [("a", 1, "aa"), ("b", 2, "bb")])
        var renewed = old
        renewed.token = "new"
        #expect(GrantRenewal.plan(old: old, new: renewed) == ["a": .keep, "b": .keep])
    }

    @Test func newVersionKeepsOnlySamePathAndHash() {
        let old = grant("1", [("a", 1, "aa"), ("b", 2, "bb"), ("c", 3, "cc"), ("d", 4, "dd")])
        let new = grant("2", [("a", 1, "AA"), ("b", 2, "b2"), ("x", 3, "cc"), ("d", 5, "dd")])
        // a: same path and hash (case-insensitive) → keep; b: changed → discard; c: moved → discard;
        // d: same hash, different length → discard.
        #expect(GrantRenewal.plan(old: old, new: new) == ["a": .keep, "b": .discard, "c": .discard, "d": .discard])
    }
}
