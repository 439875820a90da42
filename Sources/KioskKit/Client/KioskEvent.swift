import Foundation

/// A download as the app sees it at one moment.
public struct DownloadSnapshot: Sendable, Hashable, Identifiable {
    /// The download's identifier.
    public var id: DownloadID
    /// The product being downloaded.
    public var productID: String
    /// The version being downloaded, once a grant is known.
    public var version: String?
    /// Its state.
    public var state: DownloadState
    /// Its progress.
    public var progress: DownloadProgress
    /// Its priority.
    public var priority: DownloadPriority
    /// When it was enqueued.
    public var createdAt: Date
    /// While the state is `paused(.insufficientStorage)`, the ``KioskError/insufficientStorage(needed:available:)``
    /// that paused it; read it through ``error``.
    public var storagePauseError: KioskError?

    /// A snapshot from its parts (for previews and tests; the client makes the real ones).
    public init(
        id: DownloadID = DownloadID(), productID: String, version: String? = nil, state: DownloadState,
        progress: DownloadProgress = DownloadProgress(), priority: DownloadPriority = .normal, createdAt: Date = Date(),
        storagePauseError: KioskError? = nil
    ) {
        self.id = id
        self.productID = productID
        self.version = version
        self.state = state
        self.progress = progress
        self.priority = priority
        self.createdAt = createdAt
        self.storagePauseError = storagePauseError
    }

    /// The error of a failed download, or the reason of a storage pause: the
    /// ``KioskError/insufficientStorage(needed:available:)`` with the bytes still needed and, when known, the bytes
    /// available (after a relaunch, `needed` is the bytes still to fetch and `available` is `nil`). `nil` otherwise.
    public var error: KioskError? {
        switch state {
        case .failed(let error): return error
        case .paused(.insufficientStorage):
            let remaining = max(0, progress.bytesExpected - progress.bytesWritten)
            return storagePauseError ?? .insufficientStorage(needed: remaining, available: nil)
        default: return nil
        }
    }
}

/// What a ``KioskClient`` reports on ``KioskClient/events``.
public enum KioskEvent: Sendable, Hashable {
    /// A download changed state (enqueued, started, paused, retrying, verifying, finished, failed, cancelled).
    case stateChanged(DownloadSnapshot)
    /// A download made progress (at most about ten per second per download).
    case progress(DownloadSnapshot)
    /// A product version is installed and verified: deliver it, then finish the store transaction.
    case installed(InstalledContent)
    /// Installed content is gone: removed by the app, or purged by the system behind the library's back.
    case removed(productID: String, version: String)
}

extension KioskEvent {
    /// The product the event is about.
    var productID: String {
        switch self {
        case .stateChanged(let snapshot), .progress(let snapshot): snapshot.productID
        case .installed(let content): content.productID
        case .removed(let productID, _): productID
        }
    }
}

/// For apps that prefer a delegate to an `AsyncSequence`: register with ``KioskClient/addObserver(_:)``.
///
/// Every method has an empty default implementation. Calls arrive in order, one at a time, on no particular
/// executor; the client keeps a weak reference.
public protocol KioskObserver: AnyObject, Sendable {
    /// One or more downloads changed (state or progress), like `paymentQueue(_:updatedDownloads:)`.
    func kioskClient(_ client: KioskClient, didUpdate downloads: [DownloadSnapshot]) async
    /// Content was installed: deliver it, then finish the store transaction.
    func kioskClient(_ client: KioskClient, didInstall content: InstalledContent) async
    /// Installed content is gone (removed or purged).
    func kioskClient(_ client: KioskClient, didRemove productID: String, version: String) async
}

extension KioskObserver {
    /// Does nothing.
    public func kioskClient(_ client: KioskClient, didUpdate downloads: [DownloadSnapshot]) async {}
    /// Does nothing.
    public func kioskClient(_ client: KioskClient, didInstall content: InstalledContent) async {}
    /// Does nothing.
    public func kioskClient(_ client: KioskClient, didRemove productID: String, version: String) async {}
}

/// Fans events out to every subscriber of ``KioskClient/events`` and of ``KioskClient/stateUpdates(for:)``. Each
/// stream reads from its own ``CoalescingBuffer``: progress is coalesced per product, nothing else is ever dropped.
final class EventBroadcaster: Sendable {
    /// A state stream's buffer, and whether the stream ends at a final state.
    private struct StateSubscriber {
        let buffer: CoalescingBuffer<ProductState>
        let endsAtFinalState: Bool
    }

    private struct Subscribers {
        var events: [UUID: CoalescingBuffer<KioskEvent>] = [:]
        var states: [String: [UUID: StateSubscriber]] = [:]
        /// The broadcaster has finished: a later stream ends at once.
        var isFinished = false
    }

    private let subscribers = Locked(Subscribers())

    /// A new stream receiving every event from now on; it ends when the broadcaster finishes (at once when it
    /// already has), when its reader is cancelled, or when it is released.
    func subscribe() -> AsyncStream<KioskEvent> {
        let buffer = CoalescingBuffer<KioskEvent>()
        let key = UUID()
        let registered = subscribers.withLock { subscribers in
            guard !subscribers.isFinished else { return false }
            subscribers.events[key] = buffer
            return true
        }
        if !registered { buffer.finish() }
        return Self.stream(of: buffer) { [weak self] in self?.subscribers.withLock { $0.events[key] = nil } }
    }

    /// A stream of the product's state that starts with `initial` and ends after a final state
    /// (``ProductState/isFinal``) unless `endingAtFinalState` is false, when its reader is cancelled or it is
    /// released, or when the broadcaster finishes.
    func subscribeState(of productID: String, initial: ProductState, endingAtFinalState: Bool = true)
        -> AsyncStream<ProductState>
    {
        let buffer = CoalescingBuffer<ProductState>()
        buffer.push(initial, key: productID, isProgress: false, isFinal: endingAtFinalState && initial.isFinal)
        let key = UUID()
        let registered = subscribers.withLock { subscribers in
            guard !subscribers.isFinished, !buffer.isFinished else { return false }
            subscribers.states[productID, default: [:]][key] = StateSubscriber(
                buffer: buffer, endsAtFinalState: endingAtFinalState)
            return true
        }
        if !registered { buffer.finish() }
        return Self.stream(of: buffer) { [weak self] in
            self?.subscribers.withLock { subscribers in
                subscribers.states[productID]?[key] = nil
                if subscribers.states[productID]?.isEmpty == true { subscribers.states[productID] = nil }
            }
        }
    }

    /// A stream that reads `buffer`; when its reader is cancelled or the stream is released, the buffer ends and
    /// `unregister` runs.
    private static func stream<Element>(
        of buffer: CoalescingBuffer<Element>, unregister: @escaping @Sendable () -> Void
    ) -> AsyncStream<Element> {
        let subscription = Subscription(buffer: buffer, unregister: unregister)
        return AsyncStream(unfolding: { await subscription.buffer.next() }, onCancel: { subscription.end() })
    }

    /// The buffers of the open event streams (for tests).
    var eventBuffers: [CoalescingBuffer<KioskEvent>] { subscribers.withLock { Array($0.events.values) } }

    /// The buffers of the product's open state streams (for tests).
    func stateBuffers(of productID: String) -> [CoalescingBuffer<ProductState>] {
        subscribers.withLock { subscribers in subscribers.states[productID].map { $0.values.map(\.buffer) } ?? [] }
    }

    func send(_ event: KioskEvent) {
        let productID = event.productID
        let state = ProductState.after(event)
        let (events, states) = subscribers.withLock { subscribers in
            let states = subscribers.states[productID].map { Array($0.values) } ?? []
            // A final state ends the streams that end there: they leave the broadcaster (their buffers end once
            // read).
            if state?.state.isFinal == true {
                subscribers.states[productID] = subscribers.states[productID]?.filter {
                    !$0.value.endsAtFinalState
                }
                if subscribers.states[productID]?.isEmpty == true { subscribers.states[productID] = nil }
            }
            return (Array(subscribers.events.values), states)
        }
        let isProgress = if case .progress = event { true } else { false }
        for buffer in events { buffer.push(event, key: productID, isProgress: isProgress) }
        guard let (state, isProgress) = state else { return }
        for subscriber in states {
            subscriber.buffer.push(
                state, key: productID, isProgress: isProgress, isFinal: subscriber.endsAtFinalState && state.isFinal)
        }
    }

    /// Ends every stream once its pending elements are read; later streams end at once.
    func finish() {
        let buffers = subscribers.withLock { subscribers in
            defer { subscribers = Subscribers(isFinished: true) }
            return (Array(subscribers.events.values), subscribers.states.values.flatMap(\.values).map(\.buffer))
        }
        for buffer in buffers.0 { buffer.finish() }
        for buffer in buffers.1 { buffer.finish() }
    }
}

/// The reading end of one stream: it ends its buffer and unregisters it when the reader is cancelled, and when the
/// stream is released without being read to its end (`AsyncStream(unfolding:)` then releases its closure, and this).
private final class Subscription<Element: Sendable>: Sendable {
    let buffer: CoalescingBuffer<Element>
    private let unregister: @Sendable () -> Void

    init(buffer: CoalescingBuffer<Element>, unregister: @escaping @Sendable () -> Void) {
        self.buffer = buffer
        self.unregister = unregister
    }

    deinit { end() }

    func end() {
        buffer.finish()
        unregister()
    }
}
