import Foundation
import KioskCore
import Testing

@testable import KioskKit

/// The journal's log: appends, replay, torn tails, compaction and migration from format 1.
@Suite("Journal log")
struct JournalLogTests {
    let root: URL
    let layout: CacheLayout

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-log-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        layout = CacheLayout(root: root)
    }

    static let grant = Grant(
        productID: "com.example.a", contentVersion: "1.0", totalLength: 30,
        expiresAt: Date(timeIntervalSince1970: 1_900_000_000), token: "t",
        files: (0..<3).map { index in
            GrantFile(
                path: "Contents/\(index).bin", length: 10, sha256: String(repeating: "a", count: 64),
                url: "/v1/content/com.example.a/1.0/Contents/\(index).bin")
        })

    func record(_ sequence: UInt64 = 0) -> DownloadRecord {
        DownloadRecord(
            id: DownloadID(), productID: "com.example.a", receipt: "cmVjZWlwdA==", priority: .normal,
            sequence: sequence, state: .waiting, attempt: 0, grant: nil, entityTags: [:], verifiedPaths: [],
            integrityFailures: [:], createdAt: Date(timeIntervalSince1970: 1_800_000_000))
    }

    /// A journal with one download whose grant arrived and whose first two files were verified.
    func writeSomeEntries(_ journal: Journal) async throws -> DownloadRecord {
        try journal.replace(with: JournalSnapshot())
        var expected = record()
        journal.append([.created(expected)])
        journal.append([.state(id: expected.id, .active, attempt: 1)])
        journal.append([
            .changed(id: expected.id, .grant(Self.grant, receivedAt: Date(timeIntervalSince1970: 1_800_000_001)))
        ])
        journal.append([.changed(id: expected.id, .entityTag(path: "Contents/0.bin", tag: "\"e\""))])
        journal.append([.changed(id: expected.id, .verified(path: "Contents/0.bin"))])
        journal.append([.changed(id: expected.id, .verified(path: "Contents/1.bin"))])
        await journal.waitUntilDurable()
        expected.state = .active
        expected.attempt = 1
        expected.grant = Self.grant
        expected.grantReceivedAt = Date(timeIntervalSince1970: 1_800_000_001)
        expected.entityTags = ["Contents/0.bin": "\"e\""]
        expected.verifiedPaths = ["Contents/0.bin", "Contents/1.bin"]
        return expected
    }

    @Test func appendedEntriesReplayOntoTheSnapshot() async throws {
        let journal = Journal(layout: layout)
        let expected = try await writeSomeEntries(journal)
        let (loaded, recovery) = Journal(layout: layout).load()
        #expect(recovery == .loaded)
        #expect(loaded.downloads == [expected])
        #expect(loaded.nextSequence == 1)
        // The snapshot was written once (by `replace`): the entries went to the log only.
        #expect(journal.read(journal.url)?.downloads.isEmpty == true)
    }

    @Test(arguments: ["noNewline", "halfALine", "garbage"])
    func aTornLastLineIsIgnored(_ damage: String) async throws {
        let journal = Journal(layout: layout)
        var expected = try await writeSomeEntries(journal)
        let handle = try FileHandle(forWritingTo: journal.logURL)
        try handle.seekToEnd()
        let line = try KioskJSON.encode(JournalEntry.changed(id: expected.id, .verified(path: "Contents/2.bin")))
        switch damage {
        case "noNewline": try handle.write(contentsOf: line)  // the whole entry, but the crash came before "\n"
        case "halfALine": try handle.write(contentsOf: line.prefix(line.count / 2))
        default: try handle.write(contentsOf: Data([0xFF, 0x00, 0x7B]) + Data("\n".utf8))
        }
        try handle.close()
        let (loaded, recovery) = Journal(layout: layout).load()
        #expect(recovery == .loaded)
        #expect(loaded.downloads == [expected])

        // The next launch compacts: the torn tail is gone and new entries append cleanly.
        let reopened = Journal(layout: layout)
        let (state, _) = reopened.load()
        try reopened.replace(with: state)
        reopened.append([.changed(id: expected.id, .verified(path: "Contents/2.bin"))])
        await reopened.waitUntilDurable()
        expected.verifiedPaths.insert("Contents/2.bin")
        #expect(Journal(layout: layout).load().0.downloads == [expected])
    }

    @Test func aStaleLogIsNotReplayedTwice() async throws {
        // A crash after a compaction's new snapshot and before its new log: the old log is already in the snapshot.
        let journal = Journal(layout: layout)
        let expected = try await writeSomeEntries(journal)
        let staleLog = try Data(contentsOf: journal.logURL)
        let (state, _) = journal.load()
        try journal.replace(with: state)
        try staleLog.write(to: journal.logURL)
        let (loaded, _) = Journal(layout: layout).load()
        #expect(loaded.downloads == [expected])
    }

    @Test func aLogLargerThanTheSnapshotIsCompacted() async throws {
        let journal = Journal(layout: layout)
        try journal.replace(with: JournalSnapshot())
        let download = record()
        journal.append([.created(download)])
        journal.append([.changed(id: download.id, .grant(Self.grant, receivedAt: nil))])
        // Many small changes: the log passes the compaction threshold several times.
        let tags = 6_000
        for index in 0..<tags {
            journal.append([.changed(id: download.id, .entityTag(path: "Contents/0.bin", tag: "\"\(index)\""))])
        }
        await journal.waitUntilDurable()
        let logSize = try #require(try FileManager.default.attributesOfItem(atPath: journal.logURL.path)[.size] as? Int)
        #expect(logSize <= Journal.minimumCompactionSize)
        let snapshot = try #require(journal.read(journal.url))
        #expect((snapshot.generation ?? 0) > 1)
        let (loaded, _) = Journal(layout: layout).load()
        #expect(loaded.downloads.first?.entityTags == ["Contents/0.bin": "\"\(tags - 1)\""])
        #expect(loaded.downloads.first?.grant == Self.grant)
    }

    @Test func anEntryLargerThanTheCompactionSizeIsWrittenAsASnapshotNotALine() async throws {
        // A grant of many files: its entry alone is larger than the log may grow. It is not written to the log (nor
        // held whole in memory): the log stops at the limit and a compaction writes the state instead.
        let journal = Journal(layout: layout)
        try journal.replace(with: JournalSnapshot())
        let download = record()
        let files = (0..<4_000).map { index in
            GrantFile(
                path: "Contents/\(index).bin", length: 1, sha256: String(repeating: "a", count: 64),
                url: "/v1/content/com.example.a/1.0/Contents/\(index).bin")
        }
        let large = Grant(
            productID: "com.example.a", contentVersion: "1.0", totalLength: 4_000,
            expiresAt: Date(timeIntervalSince1970: 1_900_000_000), token: "t", files: files)
        journal.append([.created(download)])
        journal.append([.changed(id: download.id, .grant(large, receivedAt: nil))])
        journal.append([.changed(id: download.id, .verified(path: "Contents/0.bin"))])
        await journal.waitUntilDurable()
        let snapshot = try #require(journal.read(journal.url))
        #expect(snapshot.downloads.first?.grant == large)
        let logSize = try #require(try FileManager.default.attributesOfItem(atPath: journal.logURL.path)[.size] as? Int)
        #expect(logSize < 4096)
        let (loaded, recovery) = Journal(layout: layout).load()
        #expect(recovery == .loaded)
        #expect(loaded.downloads.first?.grant == large)
        #expect(loaded.downloads.first?.verifiedPaths == ["Contents/0.bin"])
    }

    @Test func aDiskFullInTheMiddleOfALineLosesNothingThatWasDurableAndTheNextWriteCompacts() async throws {
        let disk = TestDiskFileSystem()
        let journal = Journal(layout: layout, fileSystem: disk)
        let expected = try await writeSomeEntries(journal)
        // The next entry is cut by a full disk after a few bytes: a torn line in the log.
        disk.budget.withLock { $0 = 8 }
        journal.append([.changed(id: expected.id, .verified(path: "Contents/2.bin"))])
        await journal.waitUntilDurable()
        let (afterFailure, recovery) = Journal(layout: layout).load()
        #expect(recovery == .loaded)
        #expect(afterFailure.downloads == [expected])  // the torn line is dropped, everything before it kept
        // Space again: the next write starts a fresh snapshot and log, which hold the entry the disk refused.
        disk.budget.withLock { $0 = nil }
        journal.append([.state(id: expected.id, .paused(.user), attempt: 1)])
        await journal.waitUntilDurable()
        let (loaded, _) = Journal(layout: layout).load()
        #expect(loaded.downloads.first?.verifiedPaths == ["Contents/0.bin", "Contents/1.bin", "Contents/2.bin"])
        #expect(loaded.downloads.first?.state == .paused(.user))
    }

    @Test func appendersWaitForRoomWhileTheQueueIsFullAndGoOnOnceTheWriterTakesIt() async throws {
        let disk = TestDiskFileSystem()
        let journal = Journal(layout: layout, fileSystem: disk)
        try journal.replace(with: JournalSnapshot())
        let download = record()
        // The writer takes a full group and stops in the log's fsync, held until `release`.
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        disk.beforeSynchronize.withLock {
            $0 = {
                entered.signal()
                release.wait()
            }
        }
        for _ in 0..<Journal.groupSize { journal.append([.created(download)]) }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                entered.wait()
                continuation.resume()
            }
        }
        disk.beforeSynchronize.withLock { $0 = nil }
        #expect(await waitsForRoom(journal) == false)  // the queue is empty: no wait
        for index in 0..<Journal.maximumPending {
            journal.append([.changed(id: download.id, .verified(path: "Contents/\(index).bin"))])
        }
        let waiter = Task { await journal.waitForRoom() }
        #expect(await waitsForRoom(journal) == true)
        release.signal()  // the writer finishes its group and takes the queue: the waiters go on
        await waiter.value
        await journal.waitUntilDurable()
        let (loaded, _) = Journal(layout: layout).load()
        #expect(loaded.downloads.first?.verifiedPaths.count == Journal.maximumPending)
    }

    /// Whether `waitForRoom()` is still waiting after a quarter of a second.
    private func waitsForRoom(_ journal: Journal) async -> Bool {
        let done = Locked(false)
        let task = Task {
            await journal.waitForRoom()
            done.withLock { $0 = true }
        }
        try? await Task.sleep(for: .milliseconds(250))
        let waiting = !done.withLock { $0 }
        if !waiting { await task.value }
        return waiting
    }

    @Test func aFormat1JournalIsMigratedByTheFirstCompaction() async throws {
        let fixture = try #require(
            Bundle.module.url(forResource: "journal-format1", withExtension: "json", subdirectory: "Fixtures"))
        let journal = Journal(layout: layout)
        try FileManager.default.copyItem(at: fixture, to: journal.url)
        let (old, recovery) = journal.load()
        #expect(recovery == .loaded)
        #expect(old.format == 1 && old.generation == nil)
        try journal.replace(with: old)
        let id = try #require(old.downloads.first?.id)
        journal.append([.changed(id: id, .verified(path: "Contents/level-2.bin"))])
        await journal.waitUntilDurable()
        let migrated = try #require(journal.read(journal.url))
        #expect(migrated.format == 2)
        let (loaded, _) = Journal(layout: layout).load()
        #expect(loaded.downloads.first?.verifiedPaths == ["Contents/level-0.bin", "Contents/level-2.bin"])
        #expect(loaded.installed == old.installed)
        #expect(loaded.nextSequence == 5)
    }

    @Test func changesApplyTheSameWayToRecordsAndWork() {
        var record = record()
        record.apply(.grant(Self.grant, receivedAt: nil))
        record.apply(.verified(path: "Contents/0.bin"))
        record.apply(.integrityFailures(path: "Contents/1.bin", count: 1))
        record.apply(.entityTag(path: "Contents/1.bin", tag: "\"x\""))
        var work = DownloadWork(
            productID: "com.example.a", proof: .receipt("r"), grant: nil, grantReceivedAt: nil,
            entityTags: [:], verifiedPaths: [], integrityFailures: [:])
        work.record(.grant(Self.grant, receivedAt: nil))
        work.record(.verified(path: "Contents/0.bin"), file: Self.grant.files[0])
        work.record(.verified(path: "Contents/0.bin"), file: Self.grant.files[0])  // twice: counted once
        work.record(.integrityFailures(path: "Contents/1.bin", count: 1))
        work.record(.entityTag(path: "Contents/1.bin", tag: "\"x\""))
        #expect(work.verifiedPaths == record.verifiedPaths)
        #expect(work.integrityFailures == record.integrityFailures && work.entityTags == record.entityTags)
        #expect(work.verifiedBytes == 10 && record.verifiedLength == 10)
        work.record(.discarded(path: "Contents/0.bin"))
        #expect(work.verifiedBytes == 0 && work.verifiedPaths.isEmpty)
        // A grant without a file forgets what was known about it.
        var smaller = Self.grant
        smaller.files.removeLast(2)
        record.apply(.grant(smaller, receivedAt: nil))
        #expect(record.entityTags.isEmpty && record.integrityFailures.isEmpty)
        record.apply(.grant(nil, receivedAt: nil))
        #expect(record.verifiedPaths.isEmpty)
    }
}
