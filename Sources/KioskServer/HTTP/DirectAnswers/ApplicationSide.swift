import HummingbirdCore
import NIOCore

/// The application's side of one connection: Hummingbird's handlers (the conversion to HTTP Types, the request read
/// timeout, the connection state), the async channel its connection task reads requests from and writes answers to,
/// and that task's work. ``DirectAnswerHandler`` starts it when the connection first needs it (a request for the
/// routes, a request that does not parse); a connection that only ever gets direct answers never pays for it.
///
/// Loop-bound: used only on the channel's event loop.
struct ApplicationSide {
    /// Adds the application's handlers at the end of the channel's pipeline (right after ``DirectAnswerHandler``)
    /// and wraps the channel for the connection task.
    typealias Install = (any Channel) throws -> HTTP1Channel.Value

    private enum State {
        case waiting(Install)
        case started
        case ended
    }

    private var state: State
    /// Succeeded with the application's async channel when the side starts, with nil when the connection ends
    /// without it (``KioskHTTP1Channel/handle(value:logger:)`` waits for it).
    private let started: EventLoopPromise<HTTP1Channel.Value?>

    /// A side installed by `install` when started; `started` learns the outcome.
    init(install: @escaping Install, started: EventLoopPromise<HTTP1Channel.Value?>) {
        self.state = .waiting(install)
        self.started = started
    }

    /// Whether the application's handlers are in the pipeline.
    var isStarted: Bool {
        if case .started = state { return true }
        return false
    }

    /// Starts the side on `channel` unless it has started already; false when it cannot run (it failed to start,
    /// or the connection ended): the caller closes the connection.
    mutating func start(on channel: any Channel) -> Bool {
        switch state {
        case .started:
            return true
        case .ended:
            return false
        case .waiting(let install):
            do {
                let value = try install(channel)
                state = .started
                started.succeed(value)
                return true
            } catch {
                state = .ended
                started.succeed(nil)
                return false
            }
        }
    }

    /// The connection ended: a side that never started never will.
    mutating func connectionEnded() {
        guard case .waiting = state else { return }
        state = .ended
        started.succeed(nil)
    }
}
