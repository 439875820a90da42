import Foundation

extension Duration {
    /// The duration in seconds, as a `TimeInterval` (what `Date` arithmetic takes).
    public var timeInterval: TimeInterval { self / .seconds(1) }

    /// Whole seconds, rounded up and at least one: the form of a `Retry-After` delay.
    public var retryAfterSeconds: Int { max(1, Int(timeInterval.rounded(.up))) }
}
