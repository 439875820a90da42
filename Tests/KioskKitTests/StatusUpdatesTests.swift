import Foundation
import Testing

@testable import KioskKit

@Suite("Status updates")
struct StatusUpdatesTests {
    func snapshot(_ state: DownloadState, written: Int64 = 0) -> DownloadSnapshot {
        DownloadSnapshot(
            id: DownloadID(), productID: "p1", state: state,
            progress: DownloadProgress(bytesWritten: written, bytesExpected: 1_000_000))
    }

    @Test func aSlowReaderLosesNoStateChangeAndProgressStaysBounded() async throws {
        let broadcaster = EventBroadcaster()
        let stream = broadcaster.subscribeStatus(of: "p1", initial: .notQueued)
        let buffer = try #require(broadcaster.statusBuffers(of: "p1").first)
        var iterator = stream.makeAsyncIterator()
        var read: [ProductStatus] = []
        var sentStates: [DownloadState] = []
        var largest = 0
        // 100 state changes (alternating pauses and resumes), each after 100 progress events; other products' events
        // in between. The reader takes one element per 1,000 events.
        for round in 0..<100 {
            for step in 0..<100 {
                let written = Int64(round * 100 + step + 1)
                broadcaster.send(.progress(snapshot(.active, written: written)))
                broadcaster.send(.progress(DownloadSnapshot(productID: "p2", state: .active)))
                if (round * 100 + step) % 1_000 == 999, let next = await iterator.next() { read.append(next) }
            }
            let state: DownloadState = round.isMultiple(of: 2) ? .paused(.user) : .active
            sentStates.append(state)
            broadcaster.send(.stateChanged(snapshot(state)))
            largest = max(largest, buffer.pendingCount)
        }
        let content = InstalledContent(
            productID: "p1", version: "1.0", directory: URL(fileURLWithPath: "/tmp/kiosk-tests/p1"), files: [],
            installedAt: Date())
        broadcaster.send(.installed(content))
        while let next = await iterator.next() { read.append(next) }

        let readStates = read.compactMap { status -> DownloadState? in
            guard case .downloading(let snapshot) = status, snapshot.progress.bytesWritten == 0 else { return nil }
            return snapshot.state
        }
        #expect(read.first == .notQueued)
        #expect(readStates == sentStates)
        #expect(read.last == .installed(content))
        // At most one progress element between two state changes: the buffer never held more than that.
        #expect(largest <= 2 * 100 + 1)
        #expect(read.count <= 2 + 2 * 100)
        // The last progress before each state change is kept.
        let progress = read.compactMap { status -> Int64? in
            guard case .downloading(let snapshot) = status, snapshot.progress.bytesWritten > 0 else { return nil }
            return snapshot.progress.bytesWritten
        }
        #expect(progress.last == 10_000)
        #expect(broadcaster.statusBuffers(of: "p1").isEmpty)
    }

    @Test func aFinalStatusOrTheEndOfTheBroadcasterEndsTheStream() async {
        let broadcaster = EventBroadcaster()
        let cancelled = snapshot(.cancelled)
        var done = broadcaster.subscribeStatus(of: "p1", initial: .downloading(cancelled)).makeAsyncIterator()
        #expect(await done.next() == .downloading(cancelled))
        #expect(await done.next() == nil)

        var open = broadcaster.subscribeStatus(of: "p1", initial: .notQueued).makeAsyncIterator()
        broadcaster.send(.stateChanged(snapshot(.waiting)))
        broadcaster.finish()
        #expect(await open.next() == .notQueued)
        if case .downloading(let waiting)? = await open.next() {
            #expect(waiting.state == .waiting)
        } else {
            Issue.record("the state change before the end was lost")
        }
        #expect(await open.next() == nil)
        // After the end, a new stream gives the status it was given, then ends.
        var late = broadcaster.subscribeStatus(of: "p1", initial: .notQueued).makeAsyncIterator()
        #expect(await late.next() == .notQueued)
        #expect(await late.next() == nil)
    }
}
