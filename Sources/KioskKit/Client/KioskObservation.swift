import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The registration of a ``KioskObserver``; cancel it to stop the calls.
public struct KioskObservation: Sendable {
    let task: Task<Void, Never>

    /// Stops delivering events to the observer.
    public func cancel() { task.cancel() }
}
