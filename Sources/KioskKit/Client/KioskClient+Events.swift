import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension KioskClient {
    /// Every change from now on: state changes, progress (throttled), installs, removals. Each access returns a
    /// new stream; any number of subscribers may listen at once.
    ///
    /// - No state change, install or removal is ever dropped; a run of progress of one product that the reader has
    ///   not taken yet is coalesced to the latest, so a slow reader holds at most one progress element per product
    ///   between two other events.
    /// - A stream ends when the client is closed (at once when accessed after ``close()``), when its reading task is
    ///   cancelled, or when it is released.
    public nonisolated var events: AsyncStream<KioskEvent> { broadcaster.subscribe() }

    /// The state of one product, for a view to bind to: a stream that starts with the state now and follows every
    /// change. Call it on the client (`await kiosk.stateUpdates(for: id)`); the first element is taken on the
    /// client's executor, so no change falls between it and the next.
    ///
    /// - The first element is ``ProductState/notQueued`` when the product is neither queued nor installed (the
    ///   stream then waits for an enqueue), ``ProductState/installed(_:)`` when installed (checked against the disk),
    ///   or ``ProductState/outOfDate(installed:available:)`` instead when the catalog this client last fetched
    ///   (``products(ids:)`` without IDs, ``availableUpdates()``) serves another version and learnt it after the
    ///   content was installed; otherwise the state of the product's download (``ProductState/downloading(_:)``,
    ///   ``ProductState/paused(_:reason:)``, ``ProductState/failed(_:error:)``, ``ProductState/cancelled(_:)``).
    /// - No change of state is ever dropped; a run of progress updates the reader has not taken yet is coalesced to
    ///   the latest, so a slow reader costs at most one element per state change.
    /// - The stream ends after a final state (``ProductState/isFinal``: installed, out of date, failed, cancelled),
    ///   when the reading task is cancelled, and on ``close()`` (on a closed client: the last known state, then the
    ///   end). A pause (by the user or for storage) does not end it.
    public func stateUpdates(for productID: String) -> AsyncStream<ProductState> {
        stateUpdates(for: productID, endingAtFinalState: true)
    }

    /// ``stateUpdates(for:)``, or when `endingAtFinalState` is false a stream that goes on after a final state
    /// (an install, a removal, a new download), until the reading task is cancelled or the client closes.
    func stateUpdates(for productID: String, endingAtFinalState: Bool) -> AsyncStream<ProductState> {
        reconcileInstalled()
        var initial = coordinator.state(of: productID)
        if case .installed(let content) = initial, let available = catalogMirror?.newerVersion(than: content) {
            initial = .outOfDate(installed: content, available: available)
        }
        return broadcaster.subscribeState(of: productID, initial: initial, endingAtFinalState: endingAtFinalState)
    }

    /// ``stateUpdates(for:)`` as ``ProductStatus``, whose `downloading` case carries paused, failed and cancelled
    /// downloads too; it ends where ``stateUpdates(for:)`` does.
    @available(*, deprecated, renamed: "stateUpdates(for:)")
    public func statusUpdates(for productID: String) -> AsyncStream<ProductStatus> {
        let states = stateUpdates(for: productID)
        return AsyncStream { continuation in
            let task = Task {
                for await state in states { continuation.yield(ProductStatus(state)) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Registers an observer (kept weakly) that receives the events as delegate calls until the returned
    /// observation is cancelled, the observer is released or the client is closed (after ``close()``, it receives
    /// nothing). Like ``events``, it never misses a state change; progress it has not taken yet is coalesced.
    @discardableResult
    public nonisolated func addObserver(_ observer: any KioskObserver) -> KioskObservation {
        let stream = broadcaster.subscribe()
        let task = Task { [weak observer, weak self] in
            for await event in stream {
                guard let observer, let client = self else { return }
                switch event {
                case .stateChanged(let snapshot), .progress(let snapshot):
                    await observer.kioskClient(client, didUpdate: [snapshot])
                case .installed(let content):
                    await observer.kioskClient(client, didInstall: content)
                case .removed(let productID, let version):
                    await observer.kioskClient(client, didRemove: productID, version: version)
                }
            }
        }
        return KioskObservation(task: task)
    }
}
