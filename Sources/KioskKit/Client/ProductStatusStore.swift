import Foundation
import Observation

/// The state of the products an app shows, by product ID, as an `@Observable` model on the main actor: a SwiftUI
/// view reads ``state(of:)`` and redraws when it changes.
///
/// ```swift
/// let store = ProductStatusStore(client: kiosk)
/// store.track(["com.example.kiosk.magazine.2026-11"])
/// // in a view: store.state(of: "com.example.kiosk.magazine.2026-11")
/// ```
///
/// Each tracked product follows the client's state stream of the product (as ``KioskClient/stateUpdates(for:)``
/// gives it: progress coalesced, never a change of state dropped, no polling), except that the store keeps following
/// after a final state: an install, a removal, a new download after a cancel or a failure all show. Tracking ends
/// with ``stopTracking(_:)``, when the client is closed (the last known states stay), and when the store is
/// released.
@MainActor @Observable
public final class ProductStatusStore {
    /// The client whose products the store follows.
    public let client: KioskClient
    /// The state of each tracked product, by product ID, once its first state has arrived (a moment after
    /// ``track(_:)``). After ``KioskClient/close()``, the last known states stay.
    public private(set) var states: [String: ProductState] = [:]
    /// The products the store follows now.
    public private(set) var trackedProductIDs: Set<String> = []
    @ObservationIgnored private let tasks = TrackingTasks()

    /// A store following nothing yet; call ``track(_:)``.
    public init(client: KioskClient) {
        self.client = client
    }

    /// The product's state, `nil` until the product is tracked and its first state has arrived.
    public func state(of productID: String) -> ProductState? {
        states[productID]
    }

    /// ``states`` as ``ProductStatus``.
    @available(*, deprecated, renamed: "states")
    public var statuses: [String: ProductStatus] { states.mapValues(ProductStatus.init) }

    /// ``state(of:)`` as ``ProductStatus``.
    @available(*, deprecated, renamed: "state(of:)")
    public func status(of productID: String) -> ProductStatus? {
        states[productID].map(ProductStatus.init)
    }

    /// Starts following the products not followed yet. Their first states arrive a moment later (the state now,
    /// taken on the client), then every change. On a closed client, each product gets its last known state and
    /// tracking ends at once.
    public func track(_ productIDs: some Sequence<String>) {
        for productID in productIDs where !trackedProductIDs.contains(productID) {
            trackedProductIDs.insert(productID)
            let client = self.client
            let task = Task { [weak self] in
                let updates = await client.stateUpdates(for: productID, endingAtFinalState: false)
                for await state in updates {
                    guard let self else { return }
                    self.states[productID] = state
                }
                self?.ended(productID)
            }
            tasks.set(task, for: productID)
        }
    }

    /// Stops following the products and forgets their states.
    public func stopTracking(_ productIDs: some Sequence<String>) {
        for productID in productIDs {
            tasks.cancel(productID)
            trackedProductIDs.remove(productID)
            states[productID] = nil
        }
    }

    /// The product's stream ended: the client was closed (or the tracking was stopped).
    private func ended(_ productID: String) {
        guard !Task.isCancelled else { return }
        tasks.cancel(productID)
        trackedProductIDs.remove(productID)
    }
}

/// The tasks that follow the products of a ``ProductStatusStore``; releasing the store releases this, which cancels
/// them (a `deinit` of the main-actor store could not reach its own state).
private final class TrackingTasks: Sendable {
    private let tasks = Locked<[String: Task<Void, Never>]>([:])

    /// Keeps the task following `productID`.
    func set(_ task: Task<Void, Never>, for productID: String) {
        tasks.withLock { $0[productID] = task }
    }

    /// Cancels and forgets the task following `productID`.
    func cancel(_ productID: String) {
        tasks.withLock { $0.removeValue(forKey: productID) }?.cancel()
    }

    deinit {
        for task in tasks.withLock({ $0.values }) { task.cancel() }
    }
}
