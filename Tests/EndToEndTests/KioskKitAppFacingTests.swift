import Foundation
import KioskKit
import Observation
import Synchronization
import Testing

/// What an app binds to, against the real server: a download's Foundation `Progress`, the `ProductStatusStore`, the
/// `DownloadID` forms of the calls, and the `outOfDate` status. This file imports KioskKit without `@testable`, as an
/// app does.
@Suite("KioskKit app-facing API end to end", .serialized, .timeLimit(.minutes(3)))
struct KioskKitAppFacingTests {
    typealias Support = KioskKitTestSupport

    static let product = "com.example.kiosk.test.appfacing"

    /// Publishes a product of two files of `size` bytes and opens a client whose writes are slowed by `delay` per
    /// write.
    func setUp(_ server: TestServer, delay: TimeInterval = 0, size: Int = 2 << 20) async throws
        -> (client: KioskClient, proof: PurchaseProof, hashes: [String: String])
    {
        try await setUp(server, pace: WritePace(delay), size: size)
    }

    /// ``setUp(_:delay:size:)`` with writes as slow as `pace` says at each moment.
    func setUp(_ server: TestServer, pace: WritePace, size: Int = 2 << 20) async throws
        -> (client: KioskClient, proof: PurchaseProof, hashes: [String: String])
    {
        let files = ["Contents/a.bin": Support.randomData(size), "Contents/b.bin": Support.randomData(size)]
        let hashes = try await Support.publish(Self.product, version: "1.0", files: files, on: server)
        let purchase = try await server.buy(Self.product)
        var configuration = KioskClient.Configuration()
        configuration.fileWriterFactory = TestWriter.factory(pace: pace)
        let client = try await KioskClient(
            serverURL: server.baseURL, cacheRoot: server.makeScratchDirectory(), configuration: configuration)
        return (client, .receipt(purchase.receiptData), hashes)
    }

    /// Waits until some bytes of the product's download are on disk.
    func someProgress(_ client: KioskClient) async throws {
        try await Support.eventually("some progress") {
            (await client.download(for: Self.product)?.progress.bytesWritten ?? 0) > 0
        }
    }

    // MARK: - Progress

    @Test func aProgressFollowsADownloadToTheEnd() async throws {
        try await TestServer.with { server in
            // Slow until the progress has shown a value between the ends (however late a loaded machine delivers
            // it), then at full speed.
            let pace = WritePace(0.3)
            let (client, proof, hashes) = try await setUp(server, pace: pace, size: 4 << 20)
            let id = try await client.enqueue(productID: Self.product, proof: proof)
            let progress = try #require(await client.progress(for: Self.product))
            #expect(await client.progress(for: id) === progress)  // one Progress per download
            #expect(progress.isCancellable && !progress.isPausable)
            var seen: Set<Int64> = []
            try await Support.eventually("a value between the ends") {
                seen.insert(progress.completedUnitCount)
                return seen.contains { $0 > 0 && $0 < 8 << 20 }
            }
            pace.set(0)
            try await Support.eventually("the progress to finish") {
                seen.insert(progress.completedUnitCount)
                return progress.isFinished
            }
            let content = try await client.waitUntilInstalled(productID: Self.product)
            try Support.expectInstalled(content, hashes: hashes)
            #expect(progress.totalUnitCount == 8 << 20)
            #expect(progress.completedUnitCount == 8 << 20)
            #expect(progress.fractionCompleted == 1)
            #expect(!progress.isCancelled)
            // It moved through values between the two ends, never above the total.
            #expect(seen.contains { $0 > 0 && $0 < 8 << 20 })
            #expect(seen.allSatisfy { $0 <= 8 << 20 })
            // Installed: no download on its way, no progress.
            #expect(await client.progress(for: Self.product) == nil)
            #expect(await client.progress(for: id) == nil)
            await client.close()
        }
    }

    @Test func cancellingTheProgressCancelsItsDownloadAndACancelCancelsTheProgress() async throws {
        try await TestServer.with { server in
            // Slow enough that no download ends before its cancel, however late a loaded machine runs the progress's
            // cancellation handler (in a full run, a download slowed by 0.1 s a block finished first): 20 s or more.
            let pace = WritePace(0.3)
            let (client, proof, hashes) = try await setUp(server, pace: pace, size: 4 << 20)
            let first = try await client.enqueue(productID: Self.product, proof: proof)
            let progress = try #require(await client.progress(for: first))
            try await someProgress(client)
            progress.cancel()
            try await Support.eventually("the download to be cancelled") {
                await client.download(for: Self.product)?.state == .cancelled
            }
            #expect(progress.isCancelled)

            // A new download has a new Progress; the client's cancel cancels it.
            let second = try await client.enqueue(productID: Self.product, proof: proof)
            #expect(second != first)
            let next = try #require(await client.progress(for: Self.product))
            #expect(next !== progress && !next.isCancelled)
            try await someProgress(client)
            try await client.cancel(second)
            try await Support.eventually("the progress to be cancelled") { next.isCancelled }

            // A third download goes to its end.
            pace.set(0)
            _ = try await client.enqueue(productID: Self.product, proof: proof)
            try Support.expectInstalled(try await client.waitUntilInstalled(productID: Self.product), hashes: hashes)
            await client.close()
        }
    }

    // MARK: - DownloadID

    @Test func theDownloadIDFormsActOnTheirDownloadOnly() async throws {
        try await TestServer.with { server in
            let (client, proof, hashes) = try await setUp(server, delay: 0.05)
            let first = try await client.enqueue(productID: Self.product, proof: proof)
            try await client.pause(first)
            #expect(await client.download(for: first)?.state == .paused(.user))
            try await client.resume(first)
            #expect(await client.download(for: first)?.state != .paused(.user))
            try await client.cancel(first)
            #expect(await client.download(for: first)?.state == .cancelled)

            // After a new enqueue, the first ID names nothing: its calls never reach the new download.
            let second = try await client.enqueue(productID: Self.product, proof: proof)
            #expect(await client.download(for: first) == nil)
            let stale = await #expect(throws: KioskError.self) { try await client.cancel(first) }
            #expect(stale?.code == "invalid_argument")
            await #expect(throws: KioskError.self) { try await client.pause(first) }
            await #expect(throws: KioskError.self) { try await client.resume(first) }
            await #expect(throws: KioskError.self) { try await client.dismiss(downloadID: first) }
            #expect(await client.download(for: second)?.state.isTerminal == false)

            let content = try await client.ensureInstalled(productID: Self.product, proof: proof)
            try Support.expectInstalled(content, hashes: hashes)
            #expect(await client.download(for: second)?.state == .finished)
            // A finished download is not dismissed, by either form.
            await #expect(throws: KioskError.notFound(productID: Self.product)) {
                try await client.dismiss(downloadID: second)
            }
            await client.close()
            await #expect(throws: KioskError.clientClosed) { try await client.cancel(second) }
            #expect(await client.download(for: second)?.state == .finished)  // the last known state
            #expect(await client.progress(for: Self.product) == nil)
        }
    }

    // MARK: - outOfDate

    @Test func anInstalledProductIsOutOfDateOnceTheCatalogServesAnotherVersion() async throws {
        try await TestServer.with { server in
            let (client, proof, _) = try await setUp(server)
            _ = try await client.products()
            let installed = try await client.ensureInstalled(productID: Self.product, proof: proof)
            #expect(await Support.collect(await client.stateUpdates(for: Self.product)) == [.installed(installed)])

            // The server serves 2.0; the client learns it with its catalog (here through availableUpdates()).
            try await Support.publish(
                Self.product, version: "2.0", files: ["Contents/a.bin": Support.randomData(1 << 20)], on: server)
            #expect(await Support.collect(await client.stateUpdates(for: Self.product)) == [.installed(installed)])
            #expect(try await client.availableUpdates().map(\.availableVersion) == ["2.0"])
            #expect(
                await Support.collect(await client.stateUpdates(for: Self.product)) == [
                    .outOfDate(installed: installed, available: "2.0")
                ])

            // Enqueued again: the update is a download like any other, and ends installed and up to date.
            let updates = await client.stateUpdates(for: Self.product)
            try await client.enqueue(productID: Self.product, proof: proof)
            let updated = try await client.waitUntilInstalled(productID: Self.product)
            #expect(updated.version == "2.0")
            let seen = await Support.collect(updates)
            #expect(seen.first == .outOfDate(installed: installed, available: "2.0"))
            #expect(seen.count == 1)  // final: the stream ended at once
            #expect(await Support.collect(await client.stateUpdates(for: Self.product)) == [.installed(updated)])
            await client.close()
        }
    }

    @Test func aCatalogOlderThanTheInstallDoesNotMakeItOutOfDate() async throws {
        try await TestServer.with { server in
            let (client, proof, _) = try await setUp(server)
            _ = try await client.products()  // the copy says 1.0
            try await Support.publish(
                Self.product, version: "2.0", files: ["Contents/a.bin": Support.randomData(1 << 20)], on: server)
            // The install fetches what the server serves now: 2.0, newer than the copy's 1.0.
            let installed = try await client.ensureInstalled(productID: Self.product, proof: proof)
            #expect(installed.version == "2.0")
            #expect(await client.cachedProducts?.first { $0.id == Self.product }?.contentVersion == "1.0")
            #expect(await Support.collect(await client.stateUpdates(for: Self.product)) == [.installed(installed)])
            await client.close()
        }
    }

    // MARK: - ProductStatusStore

    @Test func theStoreFollowsAProductThroughInstallRemovalAndClose() async throws {
        try await TestServer.with { server in
            let (client, proof, _) = try await setUp(server, delay: 0.005)
            try await Self.followThroughInstallRemovalAndClose(client: client, proof: proof)
        }
    }

    /// On the main actor, as a view model: a store follows a product through a download, its install, its removal
    /// and the client's close.
    @MainActor static func followThroughInstallRemovalAndClose(client: KioskClient, proof: PurchaseProof)
        async throws
    {
        let store = ProductStatusStore(client: client)
        store.track([product])
        #expect(store.trackedProductIDs == [product])
        await until { store.state(of: product) == .notQueued }

        var sawDownloading = false
        let install = Task { try await client.ensureInstalled(productID: product, proof: proof) }
        await until {
            if case .downloading? = store.state(of: product) { sawDownloading = true }
            return if case .installed? = store.state(of: product) { true } else { false }
        }
        let content = try await install.value
        #expect(sawDownloading)
        #expect(store.state(of: product) == .installed(content))

        // The store goes on after a final state: a removal shows.
        try await client.remove(product)
        await until { store.state(of: product) == .notQueued }

        // Closing the client ends the tracking; the last known state stays.
        await client.close()
        await until { store.trackedProductIDs.isEmpty }
        #expect(store.state(of: product) == .notQueued)
        #expect(store.states == [product: .notQueued])
    }

    @Test func stopTrackingForgetsTheProduct() async throws {
        try await TestServer.with { server in
            let (client, _, _) = try await setUp(server)
            try await Self.stopTracking(client: client)
        }
    }

    /// On the main actor: tracking twice is tracking once, and a product no longer tracked is forgotten.
    @MainActor static func stopTracking(client: KioskClient) async throws {
        let store = ProductStatusStore(client: client)
        store.track([product, product, "com.example.kiosk.test.other"])
        #expect(store.trackedProductIDs == [product, "com.example.kiosk.test.other"])
        await until { store.states.count == 2 }
        store.stopTracking([product])
        #expect(store.trackedProductIDs == ["com.example.kiosk.test.other"])
        #expect(store.state(of: product) == nil)
        await client.close()
        await until { store.trackedProductIDs.isEmpty }
    }

    /// Waits, without polling, until `condition` holds: it is evaluated again at each change of what it observes
    /// (the suite's time limit bounds the wait).
    @MainActor static func until(_ condition: @escaping @MainActor () -> Bool) async {
        while !condition() {
            let resumer = Resumer()
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                resumer.set(continuation)
                let holds = withObservationTracking(condition, onChange: { resumer.resume() })
                if holds { resumer.resume() }
            }
        }
    }

    /// Resumes a continuation once, from whichever comes first.
    final class Resumer: Sendable {
        private let continuation = Mutex<CheckedContinuation<Void, Never>?>(nil)

        func set(_ continuation: CheckedContinuation<Void, Never>) { self.continuation.withLock { $0 = continuation } }

        func resume() {
            continuation.withLock { value in
                defer { value = nil }
                return value
            }?.resume()
        }
    }
}
