import Foundation
import Testing

@testable import KioskKit

@Suite("State updates")
struct StatusUpdatesTests {
    func snapshot(_ state: DownloadState, written: Int64 = 0) -> DownloadSnapshot {
        DownloadSnapshot(
            id: DownloadID(), productID: "p1", state: state,
            progress: DownloadProgress(bytesWritten: written, bytesExpected: 1_000_000))
    }

    @Test func aSlowReaderLosesNoStateChangeAndProgressStaysBounded() async throws {
        let broadcaster = EventBroadcaster()
        let stream = broadcaster.subscribeState(of: "p1", initial: .notQueued)
        let buffer = try #require(broadcaster.stateBuffers(of: "p1").first)
        var iterator = stream.makeAsyncIterator()
        var read: [ProductState] = []
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

        let readStates = read.compactMap { state -> DownloadState? in
            guard let snapshot = state.download, snapshot.progress.bytesWritten == 0 else { return nil }
            return snapshot.state
        }
        #expect(read.first == .notQueued)
        #expect(readStates == sentStates)
        #expect(read.last == .installed(content))
        // At most one progress element between two state changes: the buffer never held more than that.
        #expect(largest <= 2 * 100 + 1)
        #expect(read.count <= 2 + 2 * 100)
        // The last progress before each state change is kept.
        let progress = read.compactMap { state -> Int64? in
            guard case .downloading(let snapshot) = state, snapshot.progress.bytesWritten > 0 else { return nil }
            return snapshot.progress.bytesWritten
        }
        #expect(progress.last == 10_000)
        #expect(broadcaster.stateBuffers(of: "p1").isEmpty)
    }

    @Test func aFinalStateOrTheEndOfTheBroadcasterEndsTheStream() async {
        let broadcaster = EventBroadcaster()
        let cancelled = snapshot(.cancelled)
        var done = broadcaster.subscribeState(of: "p1", initial: .cancelled(cancelled)).makeAsyncIterator()
        #expect(await done.next() == .cancelled(cancelled))
        #expect(await done.next() == nil)

        var open = broadcaster.subscribeState(of: "p1", initial: .notQueued).makeAsyncIterator()
        broadcaster.send(.stateChanged(snapshot(.waiting)))
        broadcaster.finish()
        #expect(await open.next() == .notQueued)
        if case .downloading(let waiting)? = await open.next() {
            #expect(waiting.state == .waiting)
        } else {
            Issue.record("the state change before the end was lost")
        }
        #expect(await open.next() == nil)
        // After the end, a new stream gives the state it was given, then ends.
        var late = broadcaster.subscribeState(of: "p1", initial: .notQueued).makeAsyncIterator()
        #expect(await late.next() == .notQueued)
        #expect(await late.next() == nil)
    }

    @Test func aSlowReaderOfEventsLosesNoStateChangeAndStaysBounded() async throws {
        let broadcaster = EventBroadcaster()
        var iterator = broadcaster.subscribe().makeAsyncIterator()
        let buffer = try #require(broadcaster.eventBuffers.first)
        let products = (0..<10).map { "p\($0)" }
        var read: [KioskEvent] = []
        var sent: [KioskEvent] = []
        var largest = 0
        var sentStateChanges = 0
        // 10,000 progress events over 10 products, and 100 state changes (one every 100 progress events, each product
        // in turn); the reader takes one event per 250 sent.
        for index in 0..<10_000 {
            let product = products[index % products.count]
            broadcaster.send(
                .progress(
                    DownloadSnapshot(
                        productID: product, state: .active,
                        progress: DownloadProgress(bytesWritten: Int64(index + 1), bytesExpected: 100_000))))
            if index % 100 == 99 {
                let state: DownloadState = sentStateChanges.isMultiple(of: 2) ? .paused(.user) : .active
                let change = KioskEvent.stateChanged(
                    DownloadSnapshot(productID: products[sentStateChanges % products.count], state: state))
                sent.append(change)
                broadcaster.send(change)
                sentStateChanges += 1
            }
            largest = max(largest, buffer.pendingCount)
            // The bound: per product, at most one progress element before and after each of its state changes not
            // read yet.
            let unreadStateChanges =
                sent.count - read.filter { if case .stateChanged = $0 { true } else { false } }.count
            #expect(buffer.pendingCount <= products.count + 2 * unreadStateChanges)
            if index % 250 == 249, let next = await iterator.next() { read.append(next) }
        }
        broadcaster.finish()
        while let next = await iterator.next() { read.append(next) }

        #expect(sentStateChanges == 100)
        #expect(read.filter { if case .stateChanged = $0 { true } else { false } } == sent)
        #expect(largest <= products.count + 2 * 100)
        // Each product's progress arrives in order and ends with its last value.
        for (offset, product) in products.enumerated() {
            let written = read.compactMap { event -> Int64? in
                guard case .progress(let snapshot) = event, snapshot.productID == product else { return nil }
                return snapshot.progress.bytesWritten
            }
            #expect(written == written.sorted())
            #expect(written.last == Int64(9_990 + offset + 1))
        }
        // Progress of a product never moves ahead of a state change of the same product sent before it.
        for product in products {
            var lastChangeIndex = -1
            for event in read {
                if case .stateChanged(let snapshot) = event, snapshot.productID == product {
                    lastChangeIndex = sent.firstIndex(of: event) ?? lastChangeIndex
                }
                if case .progress(let snapshot) = event, snapshot.productID == product {
                    // Progress `n` was sent after state change number `(n - 1) / 100 - 1`, before the next ones.
                    let before = Int(snapshot.progress.bytesWritten - 1) / 100 - 1
                    #expect(before >= lastChangeIndex)
                }
            }
        }
        #expect(broadcaster.eventBuffers.isEmpty)
    }

    /// Each state of a download has its case: paused (with its reason), failed (with its error) and cancelled no
    /// longer arrive as `downloading`.
    @Test func pausedFailedAndCancelledDownloadsHaveCasesOfTheirOwn() {
        let failure = KioskError.server(status: 403, code: "not_entitled", message: "No.", retryAfter: nil)
        let cases: [(DownloadState, ProductState?)] = [
            (.waiting, nil), (.active, nil), (.verifying, nil), (.waitingForNetwork, nil),
            (.waitingToRetry(until: Date(timeIntervalSince1970: 0), attempt: 1), nil),
            (.paused(.user), .paused(snapshot(.paused(.user)), reason: .user)),
            (
                .paused(.insufficientStorage),
                .paused(snapshot(.paused(.insufficientStorage)), reason: .insufficientStorage)
            ),
            (.failed(failure), .failed(snapshot(.failed(failure)), error: failure)),
            (.cancelled, .cancelled(snapshot(.cancelled))),
        ]
        for (downloadState, expected) in cases {
            let download = snapshot(downloadState)
            let state = ProductState(download: download)
            #expect(Self.withoutID(state) == Self.withoutID(expected ?? .downloading(download)), "\(downloadState)")
            #expect(state.download == download)
            #expect(state.isFinal == (downloadState.name == "failed" || downloadState.name == "cancelled"))
        }
    }

    /// The deprecated ``ProductStatus`` sees every download as `downloading`, as before.
    @available(*, deprecated, message: "checks the deprecated ProductStatus")
    @Test func theDeprecatedStatusSeesEveryDownloadAsDownloading() {
        let failure = KioskError.server(status: 403, code: "not_entitled", message: "No.", retryAfter: nil)
        for downloadState: DownloadState in [.active, .paused(.user), .failed(failure), .cancelled] {
            let download = snapshot(downloadState)
            #expect(ProductStatus(ProductState(download: download)) == .downloading(download))
        }
        #expect(ProductStatus(.notQueued) == .notQueued)
    }

    @Test func anEventStreamEndsWhenReleasedOrLate() async {
        let broadcaster = EventBroadcaster()
        var released: AsyncStream<KioskEvent>? = broadcaster.subscribe()
        var status: AsyncStream<ProductState>? = broadcaster.subscribeState(of: "p1", initial: .notQueued)
        #expect(broadcaster.eventBuffers.count == 1 && broadcaster.stateBuffers(of: "p1").count == 1)
        released = nil
        status = nil
        #expect(released == nil && status == nil)
        // Released unread: nothing stays registered, nothing accumulates.
        #expect(broadcaster.eventBuffers.isEmpty && broadcaster.stateBuffers(of: "p1").isEmpty)

        broadcaster.finish()
        var late = broadcaster.subscribe().makeAsyncIterator()
        #expect(await late.next() == nil)
        #expect(broadcaster.eventBuffers.isEmpty)
    }

    /// The store's streams go on after a final state; the app's end there, on the same broadcaster.
    @Test func aStreamThatDoesNotEndAtAFinalStateFollowsTheNextChanges() async {
        let broadcaster = EventBroadcaster()
        let ending = broadcaster.subscribeState(of: "p1", initial: .notQueued)
        let following = broadcaster.subscribeState(of: "p1", initial: .notQueued, endingAtFinalState: false)
        let content = InstalledContent(
            productID: "p1", version: "1.0", directory: URL(fileURLWithPath: "/tmp/kiosk-tests/p1"), files: [],
            installedAt: Date())
        broadcaster.send(.stateChanged(snapshot(.active)))
        broadcaster.send(.installed(content))
        broadcaster.send(.removed(productID: "p1", version: "1.0"))
        let again = snapshot(.waiting)
        broadcaster.send(.stateChanged(again))
        #expect(broadcaster.stateBuffers(of: "p1").count == 1)
        broadcaster.finish()
        var endingSeen: [ProductState] = []
        for await status in ending { endingSeen.append(status) }
        var followingSeen: [ProductState] = []
        for await status in following { followingSeen.append(status) }
        #expect(
            endingSeen.map(Self.withoutID)
                == [.notQueued, .downloading(snapshot(.active)), .installed(content)].map(Self.withoutID))
        #expect(
            followingSeen.map(Self.withoutID)
                == [
                    .notQueued, .downloading(snapshot(.active)), .installed(content), .notQueued, .downloading(again),
                ].map(Self.withoutID))
    }

    /// A state with a fixed download ID, to compare snapshots made apart.
    static func withoutID(_ status: ProductState) -> ProductState {
        guard var snapshot = status.download else { return status }
        snapshot.id = DownloadID(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        snapshot.createdAt = Date(timeIntervalSince1970: 0)
        return ProductState(download: snapshot)
    }
}
