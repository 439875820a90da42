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

/// Fans events out to every subscriber of ``KioskClient/events`` and of ``KioskClient/statusUpdates(for:)``.
final class EventBroadcaster: Sendable {
    private let subscribers = Locked<[UUID: AsyncStream<KioskEvent>.Continuation]>([:])
    /// The status streams by product, and whether the broadcaster has finished (a later stream ends at once).
    private let statusSubscribers = Locked<(buffers: [String: [UUID: StatusBuffer]], isFinished: Bool)>(([:], false))

    /// A stream of the product's status that starts with `initial` and ends after a final status
    /// (``ProductStatus/isFinal``), when its reader is cancelled, or when the broadcaster finishes. Progress is
    /// coalesced, state changes never (see ``StatusBuffer``).
    func subscribeStatus(of productID: String, initial: ProductStatus) -> AsyncStream<ProductStatus> {
        let buffer = StatusBuffer()
        buffer.push(initial, isProgress: false)
        let key = UUID()
        let registered = statusSubscribers.withLock { subscribers in
            guard !subscribers.isFinished, !buffer.isFinished else { return false }
            subscribers.buffers[productID, default: [:]][key] = buffer
            return true
        }
        if !registered { buffer.finish() }
        return AsyncStream(
            unfolding: { await buffer.next() },
            onCancel: { [weak self] in
                buffer.finish()
                self?.removeStatus(key, of: productID)
            })
    }

    /// The buffers of the product's open status streams (for tests).
    func statusBuffers(of productID: String) -> [StatusBuffer] {
        statusSubscribers.withLock { subscribers in subscribers.buffers[productID].map { Array($0.values) } ?? [] }
    }

    private func removeStatus(_ key: UUID, of productID: String) {
        statusSubscribers.withLock { subscribers in
            subscribers.buffers[productID]?[key] = nil
            if subscribers.buffers[productID]?.isEmpty == true { subscribers.buffers[productID] = nil }
        }
    }

    /// A new stream receiving every event from now on.
    func subscribe() -> AsyncStream<KioskEvent> {
        let (stream, continuation) = AsyncStream<KioskEvent>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        let key = UUID()
        subscribers.withLock { $0[key] = continuation }
        continuation.onTermination = { [weak self] _ in
            self?.subscribers.withLock { $0[key] = nil }
        }
        return stream
    }

    func send(_ event: KioskEvent) {
        let all = subscribers.withLock { Array($0.values) }
        for continuation in all { continuation.yield(event) }
        guard let (status, isProgress) = ProductStatus.after(event) else { return }
        let productID = event.productID
        let buffers = statusSubscribers.withLock { subscribers in
            let buffers = subscribers.buffers[productID].map { Array($0.values) } ?? []
            // A final status ends these streams: they leave the broadcaster (their buffers end once read).
            if status.isFinal { subscribers.buffers[productID] = nil }
            return buffers
        }
        for buffer in buffers { buffer.push(status, isProgress: isProgress) }
    }

    func finish() {
        let all = subscribers.withLock { subscribers in
            defer { subscribers.removeAll() }
            return Array(subscribers.values)
        }
        for continuation in all { continuation.finish() }
        let buffers = statusSubscribers.withLock { subscribers in
            defer { subscribers = ([:], true) }
            return subscribers.buffers.values.flatMap(\.values)
        }
        for buffer in buffers { buffer.finish() }
    }
}
