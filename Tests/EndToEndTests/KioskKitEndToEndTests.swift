import Foundation
import KioskCore
import KioskServer
import Testing

@testable import KioskKit

/// KioskKit against the real server on an ephemeral loopback port.
@Suite("KioskKit end to end", .serialized, .timeLimit(.minutes(3)))
struct KioskKitEndToEndTests {
    typealias Support = KioskKitTestSupport
    typealias Sample = TestServer.Sample

    static let big = "com.example.kiosk.test.big"

    /// A client on a fresh cache root with fast retries.
    func makeClient(_ server: TestServer, root: URL? = nil,
                    writer: FileWriterFactory = .posix,
                    fileSystem: (any KioskFileSystem)? = nil) async throws -> KioskClient {
        try await KioskKitTestSupport.makeClient(server.baseURL, root: root ?? server.makeScratchDirectory()) {
            $0.fileWriterFactory = writer
            if let fileSystem { $0.fileSystem = fileSystem }
        }
    }

    /// Publishes a multi-file product of `files` × `mebibytes` MiB.
    func publishBig(_ server: TestServer, version: String = "1.0", files: Int = 3, mebibytes: Int = 8) async throws
        -> (hashes: [String: String], data: [String: Data]) {
        var data: [String: Data] = [:]
        for index in 0..<files { data["Contents/part-\(index).bin"] = Support.randomData(mebibytes << 20) }
        let hashes = try await Support.publish(Self.big, version: version, files: data, on: server)
        return (hashes, data)
    }

    @Test func downloadsAMultiFileProductAndVerifiesIt() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(Sample.levels)
            let client = try await makeClient(server)
            let events = client.events
            let recorder = Task {
                var seen: [KioskEvent] = []
                for await event in events {
                    seen.append(event)
                    if case .installed = event { break }
                }
                return seen
            }
            let id = try await client.enqueue(productID: Sample.levels, receipt: purchase.receiptData)
            let content = try await client.waitUntilInstalled(productID: Sample.levels)
            #expect(content.version == "1.2")
            #expect(content.files.count == 10)
            for file in content.files {
                let original = server.contentDirectory.appendingPathComponent(Sample.levels).appendingPathComponent(file.path)
                #expect(try Support.sha256(of: content.url(for: file.path)) == Support.sha256(of: original), "\(file.path)")
                #expect(file.sha256 == (try Support.sha256(of: original)))
            }
            #expect(content.directory.path.hasPrefix(client.cacheRoot.path + "/Content/\(Sample.levels)/1.2"))
            let snapshot = try #require(await client.download(for: Sample.levels))
            #expect(snapshot.id == id)
            #expect(snapshot.state == .finished)
            #expect(snapshot.progress.fraction == 1)
            #expect(await client.installedContent().map(\.productID) == [Sample.levels])
            let seen = await recorder.value
            let states = seen.compactMap { event -> String? in
                if case .stateChanged(let snapshot) = event { return snapshot.state.name } else { return nil }
            }
            #expect(states.first == "waiting")
            #expect(states.contains("active"))
            #expect(states.contains("verifying"))
            #expect(states.last == "finished")
            // Staging is empty: the version folder was moved, not copied.
            let staging = CacheLayout(root: client.cacheRoot).staging(productID: Sample.levels)
            #expect(!FileManager.default.fileExists(atPath: staging.path))
            await client.close()
        }
    }

    @Test func catalogListsProductsAndInvalidIDs() async throws {
        try await TestServer.with { server in
            let client = try await makeClient(server)
            let all = try await client.products()
            #expect(Set(all.products.map(\.id)).isSuperset(of: [Sample.magazine, Sample.book, Sample.levels, Sample.subscription]))
            let some = try await client.products(ids: [Sample.book, "com.example.unknown"])
            #expect(some.products.map(\.id) == [Sample.book])
            #expect(some.invalidProductIDs == ["com.example.unknown"])
            // The second request is revalidated with If-None-Match and answered from the cache.
            #expect(try await client.products(ids: [Sample.book, "com.example.unknown"]) == some)
            await client.close()
        }
    }

    @Test func pauseKeepsBytesAndResumeFinishes() async throws {
        try await TestServer.with { server in
            let (hashes, _) = try await publishBig(server)
            let purchase = try await server.buy(Self.big)
            let client = try await makeClient(server, writer: TestWriter.factory(delay: 0.15))
            try await client.enqueue(productID: Self.big, receipt: purchase.receiptData)
            try await Support.eventually("some progress") {
                (await client.download(for: Self.big)?.progress.bytesWritten ?? 0) > 4 << 20
            }
            try await client.pause(Self.big)
            let paused = try #require(await client.download(for: Self.big))
            #expect(paused.state == .paused(.user))
            let staging = CacheLayout(root: client.cacheRoot).staging(productID: Self.big)
            #expect(FileManager.default.fileExists(atPath: staging.path))
            let written = paused.progress.bytesWritten
            #expect(written > 0 && written < 24 << 20)
            try await Task.sleep(for: .milliseconds(300))
            #expect(await client.download(for: Self.big)?.state == .paused(.user))
            try await client.resume(Self.big)
            let content = try await client.waitUntilInstalled(productID: Self.big)
            try Support.expectInstalled(content, hashes: hashes)
            await client.close()
        }
    }

    @Test func cancelDeletesTheBytes() async throws {
        try await TestServer.with { server in
            _ = try await publishBig(server)
            let purchase = try await server.buy(Self.big)
            let client = try await makeClient(server, writer: TestWriter.factory(delay: 0.15))
            try await client.enqueue(productID: Self.big, receipt: purchase.receiptData)
            let waiter = Task { try await client.waitUntilInstalled(productID: Self.big) }
            try await Support.eventually("some progress") {
                (await client.download(for: Self.big)?.progress.bytesWritten ?? 0) > 2 << 20
            }
            try await client.cancel(Self.big)
            #expect(await client.download(for: Self.big)?.state == .cancelled)
            let staging = CacheLayout(root: client.cacheRoot).staging(productID: Self.big)
            #expect(!FileManager.default.fileExists(atPath: staging.path))
            await #expect(throws: KioskKit.KioskError.cancelled(productID: Self.big)) { try await waiter.value }
            #expect(await client.installedContent(for: Self.big) == nil)
            await client.close()
        }
    }

    @Test func closingAndReopeningResumesWithoutRefetchingBytes() async throws {
        try await TestServer.with { server in
            let (hashes, _) = try await publishBig(server, files: 3, mebibytes: 8)
            let total: Int64 = 24 << 20
            let purchase = try await server.buy(Self.big)
            let root = server.makeScratchDirectory()
            let first = try await makeClient(server, root: root, writer: TestWriter.factory(delay: 0.15))
            try await first.enqueue(productID: Self.big, receipt: purchase.receiptData)
            try await Support.eventually("a third of the bytes") {
                (await first.download(for: Self.big)?.progress.bytesWritten ?? 0) > total / 3
            }
            await first.close()  // as if the app were killed: the journal still says "active"

            // What is on disk now is kept (verified files and chunks, and how far each chunk in flight had come): the
            // new client fetches only the rest.
            let onDisk = Support.keptBytes(root: root, productID: Self.big).values.reduce(0, +)
            #expect(onDisk > total / 4)
            let sentBefore = try await Support.settledBytesSent(server)

            let second = try await makeClient(server, root: root)
            #expect(second.journalRecovery == .loaded)
            let content = try await second.waitUntilInstalled(productID: Self.big)
            try Support.expectInstalled(content, hashes: hashes)
            let sentForResume = server.contentBytesSent - sentBefore
            #expect(sentForResume == total - onDisk, "resumed with \(sentForResume) bytes, \(total - onDisk) were missing")
            await second.close()
        }
    }

    @Test func anExpiredTokenIsRenewed() async throws {
        try await TestServer.with(configure: { $0.grantLifetime = .seconds(1) }) { server in
            let (hashes, _) = try await publishBig(server, files: 4, mebibytes: 4)
            let purchase = try await server.buy(Self.big)
            let client = try await makeClient(server, writer: TestWriter.factory(delay: 0.02))
            try await client.enqueue(productID: Self.big, receipt: purchase.receiptData)
            try await Support.eventually("some progress") {
                (await client.download(for: Self.big)?.progress.bytesWritten ?? 0) > 0
            }
            try await client.pause(Self.big)
            try await Task.sleep(for: .milliseconds(1500))  // the grant's token is now expired
            try await client.resume(Self.big)
            let content = try await client.waitUntilInstalled(productID: Self.big)
            try Support.expectInstalled(content, hashes: hashes)
            await client.close()
        }
    }

    /// Downloads a product of one file of `mebibytes` MiB from a server whose tokens open content for `lifetime`
    /// and which sends every content response at most `throttle` fast (4 connections per file); checks the
    /// installed bytes and returns how long it took and the content bytes the server sent for it.
    func downloadOutlivingTokens(mebibytes: Int, lifetime: Duration, throttle: String) async throws
        -> (elapsed: Duration, sent: Int64)
    {
        let faults = try FaultSpec(parsing: "throttle=\(throttle)")
        return try await TestServer.with(configure: {
            $0.grantLifetime = lifetime
            $0.faults = .spec(faults)
        }) { server in
            let (hashes, _) = try await publishBig(server, files: 1, mebibytes: mebibytes)
            let purchase = try await server.buy(Self.big)
            let client = try await makeClient(server)
            let sentBefore = try await Support.settledBytesSent(server)
            let start = ContinuousClock.now
            try await client.enqueue(productID: Self.big, receipt: purchase.receiptData)
            let content = try await client.waitUntilInstalled(productID: Self.big)
            try Support.expectInstalled(content, hashes: hashes)
            let elapsed = ContinuousClock.now - start
            await client.close()
            return (elapsed, server.contentBytesSent - sentBefore)
        }
    }

    /// One large file fetched by chunks on 4 connections outlives its token many times over: each expiry stops new
    /// requests, lets the chunks in flight finish, and renews the grant. The chunks verified between renewals are
    /// progress, so the renewals never run out (4 in a row with nothing verified fail the transfer).
    @Test func aLargeFileOutlivingItsTokenManyTimesFinishes() async throws {
        // Every response at 8 MiB/s: a chunk (4 MiB at most) takes 0.5 s, and a token opens content for 1 to 2 s
        // (its expiry is in whole seconds); the file takes over 10 s, so more than 5 grants.
        let (elapsed, _) = try await downloadOutlivingTokens(
            mebibytes: 352, lifetime: .seconds(2), throttle: "8MiB/s")
        print("352 MiB at 4 x 8 MiB/s with a 2 s token: \(elapsed)")
        #expect(elapsed > .seconds(10))  // 6 grants at least: 5 renewals, more than 4 in a row
    }

    /// A chunk cut short when its grant stops opening content goes on from its next byte after the renewal (its
    /// bytes in the part hashed again, not fetched again): however often the token expires in the middle of a
    /// chunk, no byte of the file is sent twice.
    @Test func renewalsInTheMiddleOfChunksFetchNoByteTwice() async throws {
        // Every response at 2 MiB/s on 4 connections: the 32 MiB take over 4 s with a token open 1 to 2 s, and the
        // 1 MiB requests of a run end in the middle of a chunk more often than not.
        let (elapsed, sent) = try await downloadOutlivingTokens(
            mebibytes: 32, lifetime: .seconds(2), throttle: "2MiB/s")
        #expect(elapsed > .seconds(4))  // 3 grants at least
        #expect(sent == Int64(32 << 20))
    }

    @Test func contentChangingMidDownloadEndsWithTheNewVersion() async throws {
        try await TestServer.with { server in
            let (_, data) = try await publishBig(server, files: 3, mebibytes: 4)
            let purchase = try await server.buy(Self.big)
            // Stop with 6 MiB on disk (a full disk), change the product on the server, go on. The files are fetched
            // several at a time, so part-0 may be complete or not.
            let disk = SimulatedDisk(capacity: 6 << 20)
            let client = try await makeClient(server, writer: TestWriter.factory(disk: disk))
            try await client.enqueue(productID: Self.big, receipt: purchase.receiptData)
            try await Support.eventually("the pause in part-1") {
                await client.download(for: Self.big)?.state == .paused(.insufficientStorage)
            }
            disk.free()
            #expect(await client.download(for: Self.big)?.version == "1.0")

            // Version 2.0: part-0 unchanged, part-1 and part-2 replaced.
            var changed = data
            changed["Contents/part-1.bin"] = Support.randomData(3 << 20)
            changed["Contents/part-2.bin"] = Support.randomData(4 << 20)
            let newHashes = try await Support.publish(Self.big, version: "2.0", files: changed, on: server)
            let sentBefore = try await Support.settledBytesSent(server)
            // Verified chunks of part-0 (or all of it): journaled within the group commit's delay, long past now.
            let keptOfPart0 = Support.keptBytes(root: client.cacheRoot, productID: Self.big)["Contents/part-0.bin"] ?? 0
            try await client.resume(Self.big)
            let content = try await client.waitUntilInstalled(productID: Self.big)
            #expect(content.version == "2.0")
            try Support.expectInstalled(content, hashes: newHashes)
            // part-0's bytes were kept (same path and hash): only its rest and the two changed files were fetched.
            #expect(server.contentBytesSent - sentBefore <= Int64(7 << 20) + (Int64(4 << 20) - keptOfPart0))
            await client.close()
        }
    }

    @Test func aCorruptedPartFileIsDetectedAndRepaired() async throws {
        try await TestServer.with { server in
            let (hashes, _) = try await publishBig(server, files: 1, mebibytes: 12)
            let purchase = try await server.buy(Self.big)
            // Stop the download at exactly 5 MiB (a full disk), damage the part file, then let it go on. The file is
            // fetched whole (a writer that only appends, as with a server that sends no chunks): its part is hashed
            // again on resume. Chunks journaled as verified are not (README, "Chunks").
            let disk = SimulatedDisk(capacity: 5 << 20)
            let client = try await makeClient(server, writer: TestWriter.factory(disk: disk, appendOnly: true))
            try await client.enqueue(productID: Self.big, receipt: purchase.receiptData)
            try await Support.eventually("the pause at 5 MiB") {
                await client.download(for: Self.big)?.state == .paused(.insufficientStorage)
            }
            disk.free()
            let part = Support.partFile(client, Self.big, "Contents/part-0.bin")
            let handle = try FileHandle(forWritingTo: part)
            try handle.seek(toOffset: 1000)
            try handle.write(contentsOf: Data(repeating: 0x5A, count: 4096))
            try handle.close()
            let sentBefore = try await Support.settledBytesSent(server)
            try await client.resume(Self.big)
            let content = try await client.waitUntilInstalled(productID: Self.big)
            try Support.expectInstalled(content, hashes: hashes)
            // The damaged file was downloaded again from its first byte.
            #expect(server.contentBytesSent - sentBefore > Int64(12 << 20))
            await client.close()
        }
    }

    /// A part fetched whole is hashed again when its download resumes (12 MiB stopped at 5): that read and hash run
    /// on KioskKit's transfer queue, not on Swift's cooperative pool, which a wait on the disk would hold up.
    @Test func aPartHashedAgainOnResumeIsReadOffTheCooperativePool() async throws {
        guard #available(macOS 15, iOS 18, tvOS 18, visionOS 2, *) else { return }
        try await TestServer.with { server in
            let (hashes, _) = try await publishBig(server, files: 1, mebibytes: 12)
            let purchase = try await server.buy(Self.big)
            let disk = SimulatedDisk(capacity: 5 << 20)
            let fileSystem = CountingFileSystem()
            let client = try await makeClient(
                server, writer: TestWriter.factory(disk: disk, appendOnly: true), fileSystem: fileSystem)
            try await client.enqueue(productID: Self.big, receipt: purchase.receiptData)
            try await Support.eventually("the pause at 5 MiB") {
                await client.download(for: Self.big)?.state == .paused(.insufficientStorage)
            }
            disk.free()
            fileSystem.reset()
            try await client.resume(Self.big)
            let content = try await client.waitUntilInstalled(productID: Self.big)
            try Support.expectInstalled(content, hashes: hashes)
            #expect(fileSystem.bytesRead >= 5 << 20)
            let reads = fileSystem.reads
            #expect(reads.onTransferExecutor >= 5 && reads.elsewhere == 0, "\(reads)")
            await client.close()
        }
    }

    @Test func contentDeletedBehindTheLibrarysBackIsNotInstalled() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(Sample.magazine)
            let root = server.makeScratchDirectory()
            let client = try await makeClient(server, root: root)
            try await client.enqueue(productID: Sample.magazine, receipt: purchase.receiptData)
            let content = try await client.waitUntilInstalled(productID: Sample.magazine)
            let events = client.events
            try FileManager.default.removeItem(at: content.url(for: "Contents/issue.pdf"))  // the OS purged caches
            #expect(await client.installedContent(for: Sample.magazine) == nil)
            #expect(await client.installedContent().isEmpty)
            #expect(await client.download(for: Sample.magazine) == nil)  // never reported "finished"
            var iterator = events.makeAsyncIterator()
            #expect(await iterator.next() == .removed(productID: Sample.magazine, version: "1.0"))
            await client.close()

            // A relaunch agrees, and the product can be downloaded again.
            let reopened = try await makeClient(server, root: root)
            #expect(await reopened.installedContent(for: Sample.magazine) == nil)
            try await reopened.enqueue(productID: Sample.magazine, receipt: purchase.receiptData)
            let again = try await reopened.waitUntilInstalled(productID: Sample.magazine)
            #expect(FileManager.default.fileExists(atPath: again.url(for: "Contents/issue.pdf").path))
            await reopened.close()
        }
    }

    @Test func aFullDiskPausesWithInsufficientStorageAndResumes() async throws {
        try await TestServer.with { server in
            let (hashes, _) = try await publishBig(server, files: 2, mebibytes: 6)
            let purchase = try await server.buy(Self.big)
            // Files fetched whole (a writer that only appends): every byte written before ENOSPC is kept. (Fetched by
            // chunks, the chunks verified are kept; see ChunkedDownloadEndToEndTests.)
            let disk = SimulatedDisk(capacity: 5 << 20)
            let client = try await makeClient(server, writer: TestWriter.factory(disk: disk, appendOnly: true))
            try await client.enqueue(productID: Self.big, receipt: purchase.receiptData)
            try await Support.eventually("the insufficient-storage pause") {
                await client.download(for: Self.big)?.state == .paused(.insufficientStorage)
            }
            #expect(disk.failures >= 1)  // one per file in flight at most
            #expect(disk.failures <= 2)
            let kept = ["Contents/part-0.bin", "Contents/part-1.bin"].reduce(Int64(0)) {
                $0 + Support.fileSize(Support.partFile(client, Self.big, $1))
            }
            #expect(kept == 5 << 20)  // the bytes written before ENOSPC are kept
            disk.free()
            try await client.resume(Self.big)
            let content = try await client.waitUntilInstalled(productID: Self.big)
            try Support.expectInstalled(content, hashes: hashes)
            await client.close()
        }
    }

    @Test func aFullDiskEndsTheWaitWithBothByteCountsAndStaysResumable() async throws {
        try await TestServer.with { server in
            let (hashes, _) = try await publishBig(server, files: 1, mebibytes: 2)
            let purchase = try await server.buy(Self.big)
            let disk = SimulatedDisk(capacity: 1000)
            var configuration = KioskClient.Configuration()
            configuration.fileWriterFactory = TestWriter.factory(disk: disk)
            configuration.availableSpace = { _ in disk.available }
            let client = try await KioskClient(
                serverURL: server.baseURL, cacheRoot: server.makeScratchDirectory(), configuration: configuration)
            let full = KioskKit.KioskError.insufficientStorage(needed: 2 << 20, available: 1000)
            try await client.enqueue(productID: Self.big, receipt: purchase.receiptData)
            await #expect(throws: full) { try await client.waitUntilInstalled(productID: Self.big) }
            let paused = try #require(await client.download(for: Self.big))
            #expect(paused.state == .paused(.insufficientStorage))
            #expect(paused.error == full)
            // Still paused: a new wait ends at once with the same counts, and a resume goes on.
            await #expect(throws: full) { try await client.waitUntilInstalled(productID: Self.big) }
            disk.free()
            try await client.resume(Self.big)
            let content = try await client.waitUntilInstalled(productID: Self.big)
            try Support.expectInstalled(content, hashes: hashes)
            await client.close()
        }
    }

    @Test func notEnoughFreeSpaceBeforeStartingPauses() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(Sample.magazine)
            var configuration = KioskClient.Configuration()
            configuration.availableSpace = { _ in 1000 }
            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: server.makeScratchDirectory(),
                                               configuration: configuration)
            try await client.enqueue(productID: Sample.magazine, receipt: purchase.receiptData)
            try await Support.eventually("the insufficient-storage pause") {
                await client.download(for: Sample.magazine)?.state == .paused(.insufficientStorage)
            }
            await client.close()
        }
    }

    @Test func deliverBeforeFinish() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(Sample.book)
            let client = try await makeClient(server)
            let observer = RecordingObserver()
            let observation = client.addObserver(observer)
            // The app's purchase handler: download, deliver, and only then finish the store transaction.
            try await client.enqueue(productID: Sample.book, receipt: purchase.receiptData)
            let content = try await client.waitUntilInstalled(productID: Sample.book)
            #expect(FileManager.default.fileExists(atPath: content.url(for: "Contents/book.epub").path))
            var finishedTransactions: [String] = []
            finishedTransactions.append(purchase.transactionID)  // stands for `transaction.finish()`
            #expect(finishedTransactions == [purchase.transactionID])
            // Already installed: returns at once.
            #expect(try await client.waitUntilInstalled(productID: Sample.book) == content)
            try await Support.eventually("the observer's install call") { observer.installed == [Sample.book] }
            #expect(observer.updates > 0)
            observation.cancel()
            await client.close()
        }
    }

    @Test func restoreDownloadsWhatIsEntitledAndMissing() async throws {
        try await TestServer.with { server in
            _ = try await server.buy(Sample.magazine, user: "restorer")
            _ = try await server.buy(Sample.subscription, user: "restorer")
            let latest = try await server.buy(Sample.book, user: "restorer")  // lists all three purchases
            let client = try await makeClient(server)
            let entitlements = try await client.verifyReceipt(latest.receiptData)
            #expect(Set(entitlements.entitlements.map(\.productID)) == [Sample.magazine, Sample.book, Sample.subscription])
            let result = try await client.restore(receipt: latest.receiptData)
            #expect(Set(result.enqueued.keys) == [Sample.magazine, Sample.book])  // the subscription has no files
            _ = try await client.waitUntilInstalled(productID: Sample.magazine)
            _ = try await client.waitUntilInstalled(productID: Sample.book)
            let again = try await client.restore(receipt: latest.receiptData)
            #expect(again.enqueued.isEmpty)
            #expect(Set(again.alreadyInstalled) == [Sample.magazine, Sample.book])
            await client.close()
        }
    }

    @Test func notEntitledFailsAtOnceWithTheServersCode() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(Sample.magazine)
            let client = try await makeClient(server)
            try await client.enqueue(productID: Sample.book, receipt: purchase.receiptData)
            do {
                _ = try await client.waitUntilInstalled(productID: Sample.book)
                Issue.record("a product not in the receipt was installed")
            } catch let error as KioskKit.KioskError {
                #expect(error.apiCode == .notEntitled)
                #expect(error.isEntitlementRefusal)
                guard case .server(let status, _, let message, _) = error else { throw error }
                #expect(status == 403)
                #expect(!message.isEmpty)
            }
            let snapshot = try #require(await client.download(for: Sample.book))
            guard case .failed(let error) = snapshot.state else {
                Issue.record("expected failed, got \(snapshot.state)")
                return
            }
            #expect(error.code == "not_entitled")

            // A refunded purchase is refused the same way.
            try await server.refund(purchase.transactionID)
            try await client.enqueue(productID: Sample.magazine, receipt: purchase.receiptData)
            await #expect(throws: KioskKit.KioskError.self) { try await client.waitUntilInstalled(productID: Sample.magazine) }
            #expect(await client.download(for: Sample.magazine)?.error?.apiCode == .notEntitled)
            await client.close()
        }
    }

    @Test func enqueueingInstalledContentAgainFetchesNothing() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(Sample.magazine)
            let client = try await makeClient(server)
            try await client.enqueue(productID: Sample.magazine, receipt: purchase.receiptData)
            let first = try await client.waitUntilInstalled(productID: Sample.magazine)
            let sentBefore = try await Support.settledBytesSent(server)
            let id = try await client.enqueue(productID: Sample.magazine, receipt: purchase.receiptData)
            try await Support.eventually("the second download to finish") {
                await client.download(for: Sample.magazine)?.state == .finished
            }
            #expect(await client.download(for: Sample.magazine)?.id == id)
            #expect(server.contentBytesSent == sentBefore)
            #expect(await client.installedContent(for: Sample.magazine) == first)
            await client.close()
        }
    }

    @Test func removeAndMoveOutOfCaches() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(Sample.magazine)
            _ = try await server.buy(Sample.book)
            let client = try await makeClient(server)
            try await client.enqueue(productID: Sample.magazine, receipt: purchase.receiptData)
            let content = try await client.waitUntilInstalled(productID: Sample.magazine)
            let keep = server.makeScratchDirectory().appendingPathComponent("Library/Magazine")
            let moved = try await client.moveContentOutOfCaches(productID: Sample.magazine, to: keep)
            #expect(moved.isOutsideCaches)
            #expect(!FileManager.default.fileExists(atPath: content.directory.path))
            #expect(await client.installedContent(for: Sample.magazine)?.directory == keep.standardizedFileURL)
            try await client.remove(Sample.magazine)
            #expect(FileManager.default.fileExists(atPath: keep.path))  // moved content is the app's to delete
            #expect(await client.installedContent(for: Sample.magazine) == nil)
            await client.close()
        }
    }
}

/// A ``KioskObserver`` that records what it is told. `@unchecked Sendable`: every access holds `lock`.
final class RecordingObserver: KioskObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var _installed: [String] = []
    private var _updates = 0

    var installed: [String] { lock.withLock { _installed } }
    var updates: Int { lock.withLock { _updates } }

    func kioskClient(_ client: KioskClient, didUpdate downloads: [DownloadSnapshot]) async {
        lock.withLock { _updates += downloads.count }
    }

    func kioskClient(_ client: KioskClient, didInstall content: InstalledContent) async {
        lock.withLock { _installed.append(content.productID) }
    }
}
