import Foundation
import NIOConcurrencyHelpers

/// Where the server reads the current time on the request path: grant and token expiry, entitlement windows, the
/// receipt cache, the ledger's dates, the sandbox store's purchases, conditional requests.
///
/// ``ServerConfiguration/clock`` is the system clock unless a test or a simulation injects another; it is not a
/// command-line option.
public protocol ServerClock: Sendable {
    /// The current time.
    var now: Date { get }
}

/// The system's wall clock: the default.
public struct SystemClock: ServerClock {
    /// Creates the system clock.
    public init() {}

    /// `Date()`.
    public var now: Date { Date() }
}

/// A clock that stands still until it is moved: tests use it to let grants, tokens, subscriptions and cached
/// answers expire without waiting.
public final class ManualClock: ServerClock {
    private let current: NIOLockedValueBox<Date>

    /// A clock reading `start` until moved.
    public init(_ start: Date) { current = NIOLockedValueBox(start) }

    /// The time the clock was set or moved to.
    public var now: Date { current.withLockedValue { $0 } }

    /// Moves the clock `seconds` forward (or back, when negative).
    public func advance(by seconds: TimeInterval) { current.withLockedValue { $0 += seconds } }

    /// Sets the clock to `date`.
    public func set(_ date: Date) { current.withLockedValue { $0 = date } }
}
