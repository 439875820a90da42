import Foundation
import KioskCore
import KioskKit
import Testing

/// `ensureInstalled(productID:proof:priority:)` and `stateUpdates(for:)` against the real server: each way a call
/// can end, and what a status stream shows.
@Suite("ensureInstalled and stateUpdates end to end", .serialized, .timeLimit(.minutes(3)))
struct EnsureInstalledTests {
    typealias Support = KioskKitTestSupport
    typealias Error = KioskKit.KioskError

    static let product = "com.example.kiosk.test.ensure"

    /// How slow each write of the test's client is, unless `setUp` is given a delay: slow enough that a download is
    /// still on its way when the test acts on it, however loaded the machine (at 0.05 s a block, a loaded full run
    /// finished one before its cancel arrived); a test that waits for the install then sets it to 0.
    let pace = WritePace(0.2)

    /// Publishes a product of two 4 MiB files and opens a client whose writes are slowed by `delay` per write (by
    /// ``pace`` when nil).
    func setUp(
        _ server: TestServer, delay: TimeInterval? = nil, disk: SimulatedDisk? = nil, fileSize: Int = 4 << 20
    ) async throws
        -> (client: KioskClient, proof: PurchaseProof, hashes: [String: String])
    {
        let files = [
            "Contents/a.bin": Support.randomData(fileSize), "Contents/b.bin": Support.randomData(fileSize),
        ]
        let hashes = try await Support.publish(Self.product, version: "1.0", files: files, on: server)
        let purchase = try await server.buy(Self.product)
        var configuration = KioskClient.Configuration()
        configuration.retryPolicy = KioskKitTestSupport.quickRetries
        configuration.fileWriterFactory = TestWriter.factory(pace: delay.map { WritePace($0) } ?? pace, disk: disk)
        if let disk { configuration.availableSpace = { _ in disk.available } }
        let client = try await KioskClient(
            serverURL: server.baseURL, cacheRoot: server.makeScratchDirectory(), configuration: configuration)
        return (client, .receipt(purchase.receiptData), hashes)
    }

    /// A call of `ensureInstalled` in a task, once its download has written some bytes.
    func callInFlight(_ client: KioskClient, _ proof: PurchaseProof) async throws -> Task<
        InstalledContent, any Swift.Error
    > {
        let call = Task { try await client.ensureInstalled(productID: Self.product, proof: proof) }
        try await Support.eventually("some progress") {
            (await client.download(for: Self.product)?.progress.bytesWritten ?? 0) > 0
        }
        return call
    }

    @Test func twoConcurrentCallsShareOneDownloadAndAnInstalledProductReturnsAtOnce() async throws {
        try await TestServer.with { server in
            let (client, proof, hashes) = try await setUp(server, delay: 0)
            async let first = client.ensureInstalled(productID: Self.product, proof: proof)
            async let second = client.ensureInstalled(productID: Self.product, proof: proof)
            let (one, two) = try await (first, second)
            #expect(one == two)
            try Support.expectInstalled(one, hashes: hashes)
            let downloads = await client.downloads
            #expect(downloads.count == 1)
            // Installed: returns at once, without a new download.
            #expect(try await client.ensureInstalled(productID: Self.product, proof: proof) == one)
            #expect(await client.downloads.map(\.id) == downloads.map(\.id))
            await client.close()
        }
    }

    @Test func aPauseByTheUserKeepsTheCallWaiting() async throws {
        try await TestServer.with { server in
            let (client, proof, hashes) = try await setUp(server)
            let call = try await callInFlight(client, proof)
            try await client.pause(Self.product)
            #expect(await client.download(for: Self.product)?.state == .paused(.user))
            pace.set(0)
            try await client.resume(Self.product)
            try Support.expectInstalled(try await call.value, hashes: hashes)
            await client.close()
        }
    }

    @Test func aFullDiskThrowsInsufficientStorageAndACallAfterFreeingGoesOn() async throws {
        try await TestServer.with { server in
            let disk = SimulatedDisk(capacity: 1000)
            let (client, proof, hashes) = try await setUp(server, delay: 0, disk: disk)
            await #expect(throws: Error.insufficientStorage(needed: 8 << 20, available: 1000)) {
                try await client.ensureInstalled(productID: Self.product, proof: proof)
            }
            #expect(await client.download(for: Self.product)?.state == .paused(.insufficientStorage))
            disk.free()
            try Support.expectInstalled(
                try await client.ensureInstalled(productID: Self.product, proof: proof), hashes: hashes)
            #expect(await client.downloads.count == 1)
            await client.close()
        }
    }

    @Test func cancelDuringTheCallThrowsCancelled() async throws {
        try await TestServer.with { server in
            let (client, proof, _) = try await setUp(server)
            let call = try await callInFlight(client, proof)
            try await client.cancel(Self.product)
            await #expect(throws: Error.cancelled(productID: Self.product)) { try await call.value }
            await client.close()
        }
    }

    @Test func dismissAndRemoveDuringTheCallLeaveItRunning() async throws {
        try await TestServer.with { server in
            let (client, proof, hashes) = try await setUp(server)
            let call = try await callInFlight(client, proof)
            // Neither touches a download on its way: both say so, and the call goes on.
            await #expect(throws: Error.downloadInProgress(productID: Self.product)) {
                try await client.dismiss(productID: Self.product)
            }
            await #expect(throws: Error.downloadInProgress(productID: Self.product)) {
                try await client.remove(Self.product)
            }
            pace.set(0)
            try Support.expectInstalled(try await call.value, hashes: hashes)
            await client.close()
        }
    }

    @Test func closeDuringTheCallThrowsClientClosed() async throws {
        try await TestServer.with { server in
            let (client, proof, _) = try await setUp(server)
            let call = try await callInFlight(client, proof)
            await client.close()
            await #expect(throws: Error.clientClosed) { try await call.value }
            await #expect(throws: Error.clientClosed) {
                try await client.ensureInstalled(productID: Self.product, proof: proof)
            }
        }
    }

    @Test func cancellingTheTaskEndsTheCallAtOnceAndLeavesTheDownloadRunning() async throws {
        try await TestServer.with { server in
            let (client, proof, hashes) = try await setUp(server)
            let call = try await callInFlight(client, proof)
            call.cancel()
            // The wait was cancelled, not the download: the error says which (it used to say "cancelled", as for
            // a download that cancel(_:) stopped, and waitUntilInstalled threw CancellationError instead).
            await #expect(throws: Error.waitCancelled(productID: Self.product)) { try await call.value }
            // At once: the download, slowed to take seconds more, is still on its way (what is checked is the
            // order of the two, not a time a loaded machine may miss).
            #expect(await client.download(for: Self.product)?.state == .active)
            pace.set(0)
            // The download went on: another call joins it.
            try Support.expectInstalled(
                try await client.ensureInstalled(productID: Self.product, proof: proof), hashes: hashes)
            #expect(await client.downloads.count == 1)
            await client.close()
        }
    }

    @Test func aStateStreamStartsWithTheStateNowAndEndsWhenInstalled() async throws {
        try await TestServer.with { server in
            let (client, proof, _) = try await setUp(server, delay: 0)
            // The first element is taken on the client when the stream is made: the enqueue comes after it.
            let first = await client.stateUpdates(for: Self.product)
            let content = try await client.ensureInstalled(productID: Self.product, proof: proof)
            let seen = await Support.collect(first)
            #expect(seen.first == .notQueued)
            #expect(seen.last == .installed(content))
            let states = seen.compactMap { $0.download?.state.name }
            #expect(states.first == "waiting")
            #expect(states.contains("active"))
            // Installed: the stream gives the content and ends.
            #expect(await Support.collect(await client.stateUpdates(for: Self.product)) == [.installed(content)])
            await client.close()
        }
    }

    @Test func aStateStreamEndsOnCancelAndOnClose() async throws {
        try await TestServer.with { server in
            let (client, proof, _) = try await setUp(server)
            let call = try await callInFlight(client, proof)
            let running = await client.stateUpdates(for: Self.product)
            try await client.cancel(Self.product)
            let seen = await Support.collect(running)
            guard case .cancelled(let last)? = seen.last else {
                Issue.record("the stream did not end with the cancelled download: \(seen)")
                return
            }
            #expect(last.state == .cancelled)
            _ = await call.result
            let other = await client.stateUpdates(for: "com.example.kiosk.test.other")
            await client.close()
            #expect(await Support.collect(other) == [.notQueued])
            // On a closed client: the last known state, then the end.
            #expect(
                await Support.collect(await client.stateUpdates(for: "com.example.kiosk.test.other")) == [.notQueued])
        }
    }
}
