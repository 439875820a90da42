import Foundation
import KioskCore
import KioskKit
import KioskServer
import Testing

/// KioskKit's public calls in the states an app reaches: after a cancel, after a failure, after `close()`. None is
/// a dead end, and none traps.
@Suite("KioskKit lifecycle: no dead ends", .serialized, .timeLimit(.minutes(3)))
struct KioskKitLifecycleTests {
    typealias Support = KioskKitTestSupport
    typealias Sample = TestServer.Sample

    @Test func enqueueAfterCancelStartsAFreshDownloadAlsoAfterARelaunch() async throws {
        try await TestServer.with(configure: { $0.faults = .spec(try! FaultSpec(parsing: "throttle=256KiB/s")) }) {
            server in
            let purchase = try await server.buy(Sample.levels)
            let root = server.makeScratchDirectory()
            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            let first = try await client.enqueue(productID: Sample.levels, receipt: purchase.receiptData)
            try await client.cancel(Sample.levels)
            #expect(await client.download(for: Sample.levels)?.state == .cancelled)
            await #expect(throws: KioskError.cancelled(productID: Sample.levels)) {
                try await client.resume(Sample.levels)
            }

            let second = try await client.enqueue(productID: Sample.levels, receipt: purchase.receiptData)
            #expect(second != first)
            #expect(await client.download(for: Sample.levels)?.state.isTerminal == false)
            try await client.cancel(Sample.levels)
            await client.close()

            // The cancelled download survives a relaunch as cancelled, and enqueueing still starts over.
            let relaunched = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            #expect(await relaunched.download(for: Sample.levels)?.state == .cancelled)
            let third = try await relaunched.enqueue(productID: Sample.levels, receipt: purchase.receiptData)
            #expect(third != second)
            try await relaunched.cancel(Sample.levels)
            await relaunched.close()
        }
    }

    @Test func dismissRemovesAFailedOrCancelledDownloadOnly() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(Sample.book)
            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: server.makeScratchDirectory())
            await #expect(throws: KioskError.notFound(productID: Sample.book)) {
                try await client.dismiss(productID: Sample.book)
            }

            // Not entitled: the download fails for good.
            _ = try await client.enqueue(productID: Sample.magazine, receipt: purchase.receiptData)
            await #expect(throws: KioskError.self) { try await client.waitUntilInstalled(productID: Sample.magazine) }
            #expect(await client.download(for: Sample.magazine)?.state.name == "failed")
            try await client.dismiss(productID: Sample.magazine)
            #expect(await client.download(for: Sample.magazine) == nil)

            // An installed product is not dismissed (remove it instead).
            _ = try await client.enqueue(productID: Sample.book, receipt: purchase.receiptData)
            _ = try await client.waitUntilInstalled(productID: Sample.book)
            await #expect(throws: KioskError.notFound(productID: Sample.book)) {
                try await client.dismiss(productID: Sample.book)
            }
            #expect(await client.installedContent(for: Sample.book) != nil)
            await client.close()
        }
    }

    /// Previews and tests of an app build the values the client reports (this file imports KioskKit without
    /// `@testable`, as an app does).
    @Test func theReportedValuesHavePublicInitialisers() {
        let snapshot = DownloadSnapshot(
            productID: Sample.book, version: "1", state: .paused(.user),
            progress: DownloadProgress(bytesWritten: 5, bytesExpected: 10))
        #expect(snapshot.progress.fraction == 0.5)
        #expect(snapshot.error == nil)
        let restored = KioskClient.RestoreResult(entitlements: [], enqueued: [Sample.book: snapshot.id])
        #expect(restored.enqueued[Sample.book] == snapshot.id && restored.alreadyInstalled.isEmpty)
        #expect(
            ProductUpdate(
                product: Product(
                    id: Sample.book, type: .nonConsumable, title: "Book", description: "", contentVersion: "2",
                    contentLength: 1, fileCount: 1), installedVersion: "1"
            ).availableVersion == "2")
        let content = InstalledContent(
            productID: Sample.book, version: "1", directory: URL(fileURLWithPath: "/tmp/preview/book"),
            files: [
                InstalledFile(path: "Contents/a", length: 3, sha256: ""),
                InstalledFile(path: "b", length: 4, sha256: ""),
            ],
            installedAt: Date())
        #expect(content.totalLength == 7)
        #expect(content.url(for: "b").path == "/tmp/preview/book/b")
        #expect(ProductState.outOfDate(installed: content, available: "2").isFinal)
        #expect(!ProductState.downloading(snapshot).isFinal)
        // A storage pause without its error (after a relaunch) still says how many bytes are missing.
        let full = DownloadSnapshot(
            productID: Sample.book, state: .paused(.insufficientStorage),
            progress: DownloadProgress(bytesWritten: 4, bytesExpected: 10))
        #expect(full.error == .insufficientStorage(needed: 6, available: nil))
        let catalog = CatalogResponse(products: [], invalidProductIDs: ["com.example.typo"])
        #expect(catalog.invalidProductIDs == ["com.example.typo"])
        let entitlements = EntitlementsResponse(environment: "Sandbox", entitlements: [])
        #expect(entitlements.entitlements.isEmpty)
    }

    /// #28 item 8: `dismiss` and `remove` during a download used to throw `not_found` ("Nothing is known about X
    /// here."). They say the download is on its way, and act once it has ended.
    @Test func dismissAndRemoveDuringADownloadSayItIsOnItsWay() async throws {
        try await TestServer.with(configure: { $0.faults = .spec(try! FaultSpec(parsing: "throttle=256KiB/s")) }) {
            server in
            let purchase = try await server.buy(Sample.levels)
            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: server.makeScratchDirectory())
            let id = try await client.enqueue(productID: Sample.levels, receipt: purchase.receiptData)
            for call in ["dismiss", "dismiss(downloadID:)", "remove"] {
                do {
                    switch call {
                    case "dismiss": try await client.dismiss(productID: Sample.levels)
                    case "dismiss(downloadID:)": try await client.dismiss(downloadID: id)
                    default: try await client.remove(Sample.levels)
                    }
                    Issue.record("\(call) during a download did not throw")
                } catch let error as KioskError {
                    #expect(error.code == "download_in_progress", "\(call): \(error)")
                }
            }
            try await client.cancel(Sample.levels)
            try await client.dismiss(productID: Sample.levels)
            #expect(await client.download(for: Sample.levels) == nil)
            await client.close()
        }
    }

    /// #28 item 8: after a relaunch a finished download reported `bytesWritten` 0. It reports every byte it wrote.
    @Test(arguments: ["small files", "a large file by chunks", "an update"])
    func aFinishedDownloadReportsItsBytesAfterARelaunch(_ shape: String) async throws {
        try await TestServer.with { server in
            let product = "com.example.kiosk.test.relaunched"
            let big = Support.randomData(9 << 20)
            let files =
                shape == "small files"
                ? ["Contents/a.bin": Support.randomData(1000), "Contents/b.bin": Support.randomData(2000)]
                : ["Contents/big.bin": big]
            try await Support.publish(product, version: "1.0", files: files, on: server)
            let purchase = try await server.buy(product)
            let root = server.makeScratchDirectory()
            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            var content = try await client.ensureInstalled(productID: product, proof: .receipt(purchase.receiptData))
            if shape == "an update" {
                var edited = big
                edited.replaceSubrange(0..<1000, with: Support.randomData(1000))
                try await Support.publish(product, version: "2.0", files: ["Contents/big.bin": edited], on: server)
                content = try await client.update(productID: product, proof: .receipt(purchase.receiptData))
            }
            let before = try #require(await client.download(for: product)?.progress)
            await client.close()
            #expect(before.bytesWritten == content.totalLength && content.totalLength > 0)

            let relaunched = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            let after = try #require(await relaunched.download(for: product))
            #expect(after.state == .finished)
            #expect(after.progress.bytesWritten == content.totalLength, "\(after.progress)")
            #expect(after.progress.bytesExpected == content.totalLength, "\(after.progress)")
            #expect(after.progress.fraction == 1)
            await relaunched.close()
        }
    }

    /// #28 item 8: `ProductStatus` had no paused or failed case: a paused, a failed and a cancelled download all came
    /// as `.downloading`. ``ProductState`` gives each its case, with the pause's reason and the failure's error; the
    /// stream goes on through a pause and ends at a failure or a cancel.
    @Test func pausedFailedAndCancelledDownloadsHaveStatesOfTheirOwn() async throws {
        try await TestServer.with(configure: { $0.faults = .spec(try! FaultSpec(parsing: "throttle=256KiB/s")) }) {
            server in
            let purchase = try await server.buy(Sample.levels)
            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: server.makeScratchDirectory())
            let levels = await client.stateUpdates(for: Sample.levels)
            _ = try await client.enqueue(productID: Sample.levels, receipt: purchase.receiptData)
            try await Support.eventually("the download to start") {
                await client.download(for: Sample.levels)?.state == .active
            }
            try await client.pause(Sample.levels)
            try await client.resume(Sample.levels)
            try await client.cancel(Sample.levels)
            let seen = await Support.collect(levels)
            #expect(seen.contains { if case .paused(_, .user) = $0 { true } else { false } }, "\(seen)")
            let pausedAsDownloading = seen.filter { state in
                guard case .downloading(let download) = state else { return false }
                return download.state.name == "paused"
            }
            #expect(pausedAsDownloading.isEmpty)
            guard case .cancelled(let cancelled)? = seen.last else {
                Issue.record("the stream did not end with the cancelled download: \(seen)")
                return
            }
            #expect(cancelled.state == .cancelled)

            // The levels' receipt does not entitle the book: the download fails, and says why.
            let book = await client.stateUpdates(for: Sample.book)
            _ = try await client.enqueue(productID: Sample.book, receipt: purchase.receiptData)
            let bookSeen = await Support.collect(book)
            guard case .failed(let failed, let error)? = bookSeen.last else {
                Issue.record("the stream did not end with the failed download: \(bookSeen)")
                return
            }
            #expect(error.code == "not_entitled")
            #expect(failed.state == .failed(error))
            await client.close()
        }
    }

    /// #28 item 8: `enqueue` of an installed product whose version the catalog serves asked for a grant and ran a
    /// download of 0 bytes. After a relaunch too, it answers at once from the finished download, with every byte
    /// counted and no request to the server; once the catalog serves another version, `enqueue` fetches it.
    @Test func enqueueOfInstalledCurrentContentAsksTheServerNothing() async throws {
        try await TestServer.with { server in
            let product = "com.example.kiosk.test.current"
            try await Support.publish(
                product, version: "1.0", files: ["Contents/a.bin": Support.randomData(5000)], on: server)
            let purchase = try await server.buy(product)
            let proxy = try LoopbackProxy(to: server.port, recordsRequests: true)
            defer { proxy.stop() }
            let root = server.makeScratchDirectory()
            let first = try await KioskClient(serverURL: proxy.baseURL, cacheRoot: root)
            let content = try await first.ensureInstalled(productID: product, proof: .receipt(purchase.receiptData))
            #expect(try await first.availableUpdates().isEmpty)  // the catalog, as a store screen fetches it
            await first.close()

            let client = try await KioskClient(serverURL: proxy.baseURL, cacheRoot: root)
            let asked = proxy.requestHeads.count
            let id = try await client.enqueue(productID: product, receipt: purchase.receiptData)
            let download = try #require(await client.download(for: product))
            #expect(download.id == id)
            #expect(download.state == .finished)
            #expect(download.progress.bytesWritten == content.totalLength, "\(download.progress)")
            let waited = try await client.waitUntilInstalled(productID: product)
            // The same content (its date comes back from the journal in milliseconds).
            #expect(waited.directory == content.directory && waited.files == content.files)
            #expect(await client.downloads.count == 1)
            #expect(proxy.requestHeads.count == asked, "\(proxy.requestHeads.dropFirst(asked))")

            try await Support.publish(
                product, version: "2.0", files: ["Contents/a.bin": Support.randomData(6000)], on: server)
            #expect(try await client.availableUpdates().map(\.installedVersion) == ["1.0"])
            let beforeUpdate = proxy.requestHeads.count
            let updateID = try await client.enqueue(productID: product, receipt: purchase.receiptData)
            #expect(updateID != id)
            #expect(try await client.waitUntilInstalled(productID: product).version == "2.0")
            #expect(proxy.requestHeads.dropFirst(beforeUpdate).contains { $0.hasPrefix("POST /v1/downloads ") })
            await client.close()
        }
    }

    /// #28 item 8: `enqueue` of a product the server does not know used to leave a failed download that came back
    /// at every launch. It is refused (`not_found`) and leaves nothing behind.
    @Test func anUnknownProductIsRefusedAndLeavesNothingBehind() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(Sample.book)
            let root = server.makeScratchDirectory()
            let unknown = "com.example.kiosk.no-such-product"
            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            do {
                _ = try await client.ensureInstalled(productID: unknown, proof: .receipt(purchase.receiptData))
                Issue.record("an unknown product was installed")
            } catch let error as KioskError {
                #expect(error.code == "not_found", "\(error)")
            }
            #expect(await client.download(for: unknown) == nil)
            #expect(await client.downloads.isEmpty)
            await client.close()
            let relaunched = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            #expect(await relaunched.downloads.isEmpty)
            #expect(
                !FileManager.default.fileExists(
                    atPath: CacheLayout(root: root).staging(productID: unknown).path))
            await relaunched.close()
        }
    }

    /// Every file under `root`, by path, with its bytes' SHA-256.
    static func files(under root: URL) throws -> [String: String] {
        var files: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = enumerator?.nextObject() as? URL {
            guard try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else { continue }
            files[url.path] = Support.sha256(try Data(contentsOf: url))
        }
        return files
    }

    /// #28 item 2: `pauseAll`, `resumeAll` and `cancelAll` after `close()` used to act: `cancelAll` deleted the
    /// staging folder and journaled `cancelled`, `pauseAll` journaled a pause that left the next client's wait
    /// hanging. Now they do nothing: the cache root is byte for byte what `close()` left, and the next client
    /// finishes the download.
    @Test func theBulkCallsAfterCloseWriteNothingAndTheNextClientFinishes() async throws {
        try await TestServer.with(configure: { $0.faults = .spec(try! FaultSpec(parsing: "throttle=1MiB/s")) }) {
            server in
            let product = "com.example.kiosk.test.closed"
            let hashes = try await Support.publish(
                product, version: "1.0", files: ["Contents/a.bin": Support.randomData(3 << 20)], on: server)
            let purchase = try await server.buy(product)
            let root = server.makeScratchDirectory()
            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            _ = try await client.enqueue(productID: product, receipt: purchase.receiptData)
            try await Support.eventually("bytes on disk") {
                (await client.download(for: product)?.progress.bytesWritten ?? 0) > 0
            }
            await client.close()
            let closed = try Self.files(under: root)
            #expect(closed.keys.contains { $0.hasSuffix("journal.json") })

            await client.pauseAll()
            await client.resumeAll()
            await client.cancelAll()
            #expect(try Self.files(under: root) == closed)

            let next = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            let content = try await next.waitUntilInstalled(productID: product)
            try Support.expectInstalled(content, hashes: hashes)
            await next.close()
        }
    }

    @Test func everyCallAfterCloseThrowsClientClosedAndReadsKeepTheLastState() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(Sample.book)
            let root = server.makeScratchDirectory()
            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: root)
            _ = try await client.enqueue(productID: Sample.book, receipt: purchase.receiptData)
            let content = try await client.waitUntilInstalled(productID: Sample.book)
            let catalog = try await client.products().products
            let downloads = await client.downloads
            await client.close()
            await client.close()  // twice is fine

            let proof = PurchaseProof.receipt(purchase.receiptData)
            let closed = KioskError.clientClosed
            await #expect(throws: closed) { try await client.products() }
            await #expect(throws: closed) { try await client.products(ids: [Sample.book]) }
            await #expect(throws: closed) { try await client.verify(proof) }
            await #expect(throws: closed) { try await client.verifyReceipt(purchase.receiptData) }
            await #expect(throws: closed) { try await client.availableUpdates() }
            await #expect(throws: closed) { try await client.restore(proof: proof) }
            await #expect(throws: closed) { try await client.restore(receipt: purchase.receiptData) }
            await #expect(throws: closed) { try await client.enqueue(productID: Sample.levels, proof: proof) }
            await #expect(throws: closed) {
                try await client.enqueue(productID: Sample.levels, receipt: purchase.receiptData)
            }
            await #expect(throws: closed) {
                try await client.enqueue(productID: Sample.levels, receipt: Data(purchase.receiptData.utf8))
            }
            await #expect(throws: closed) { try await client.ensureInstalled(productID: Sample.book, proof: proof) }
            await #expect(throws: closed) { try await client.ensureInstalled(productID: Sample.levels, proof: proof) }
            await #expect(throws: closed) { try await client.pause(Sample.book) }
            await #expect(throws: closed) { try await client.resume(Sample.book) }
            await #expect(throws: closed) { try await client.cancel(Sample.book) }
            await #expect(throws: closed) { try await client.dismiss(productID: Sample.book) }
            await #expect(throws: closed) { try await client.remove(Sample.book) }
            await #expect(throws: closed) {
                try await client.moveContentOutOfCaches(productID: Sample.book, to: server.makeScratchDirectory())
            }
            await #expect(throws: closed) { try await client.waitUntilInstalled(productID: Sample.book) }
            let id = try #require(downloads.first?.id)
            await #expect(throws: closed) { try await client.pause(id) }
            await #expect(throws: closed) { try await client.resume(id) }
            await #expect(throws: closed) { try await client.cancel(id) }
            await #expect(throws: closed) { try await client.dismiss(downloadID: id) }
            // Reads answer the last known state, without reading the disk or writing the journal again (another
            // client may own the cache root by now): content deleted after close is still reported.
            let journal = root.appendingPathComponent("journal.json")
            let journaled = try Data(contentsOf: journal)
            try FileManager.default.removeItem(at: content.directory)
            #expect(await client.installedContent(for: Sample.book) == content)
            #expect(await client.installedContent() == [content])
            #expect(await client.download(for: Sample.book)?.state == .finished)
            #expect(await client.download(for: id)?.state == .finished)
            #expect(await client.progress(for: Sample.book) == nil)
            #expect(await client.downloads == downloads)
            #expect(await client.cachedProducts == catalog)
            #expect(try Data(contentsOf: journal) == journaled)
            // Streams taken after close end at once; a state stream first gives the last known state.
            var events = client.events.makeAsyncIterator()
            #expect(await events.next() == nil)
            var status = await client.stateUpdates(for: Sample.book).makeAsyncIterator()
            #expect(await status.next() == .installed(content))
            #expect(await status.next() == nil)
            var notQueued = await client.stateUpdates(for: Sample.levels).makeAsyncIterator()
            #expect(await notQueued.next() == .notQueued)
            #expect(await notQueued.next() == nil)
            // The calls without results do nothing.
            await client.pauseAll()
            await client.resumeAll()
            await client.cancelAll()
            #expect(closed.code == "client_closed")
        }
    }
}
