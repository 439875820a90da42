import NIOConcurrencyHelpers
import ServiceLifecycle

/// Asks a running ``KioskHTTPServer`` to shut down gracefully, as SIGTERM does: it stops accepting connections,
/// lets in-flight responses finish and closes the database. Embedders and tests use it instead of cancelling the
/// serving task: cancelling can drop connections that were accepted but not yet served, which SwiftNIO's
/// `NIOAsyncChannel` treats as a programming error (a trap, apple/swift-nio#2637).
public final class ServerShutdown: Sendable {
    private enum State {
        case waiting
        case serving(ServiceGroup)
        case requested
    }

    private let state = NIOLockedValueBox(State.waiting)

    /// A trigger for one run of a server.
    public init() {}

    /// Begins the graceful shutdown; a server not running yet will not start.
    public func trigger() async {
        let group: ServiceGroup? = state.withLockedValue { state in
            defer { state = .requested }
            if case .serving(let group) = state { return group }
            return nil
        }
        await group?.triggerGracefulShutdown()
    }

    /// Attaches the serving group; `false` when shutdown was already requested (the server must not start).
    func attach(_ group: ServiceGroup) -> Bool {
        state.withLockedValue { state in
            guard case .waiting = state else { return false }
            state = .serving(group)
            return true
        }
    }
}
