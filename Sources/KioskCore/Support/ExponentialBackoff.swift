/// Exponential backoff with "equal jitter" (the server's store retries and KioskKit's download retries): retry *n* waits between half and all of
/// `min(maximumDelay, initialDelay × multiplierⁿ⁻¹)`.
///
/// With the defaults the ceilings are 250 ms, 500 ms, 1 s, 2 s, 4 s, 4 s, …; half of each wait is fixed, so a
/// retry never comes too soon, and the random half spreads the retries of many servers apart.
public struct ExponentialBackoff: Sendable, Hashable {
    /// The ceiling of the first retry's wait.
    public var initialDelay: Duration
    /// The factor between successive ceilings.
    public var multiplier: Int
    /// The largest ceiling.
    public var maximumDelay: Duration

    /// Creates a backoff; by default 250 ms doubling up to 4 s. Out-of-range values are brought into range: no
    /// negative delay, a multiplier of at least 1, a largest ceiling no smaller than the first.
    public init(initialDelay: Duration = .milliseconds(250), multiplier: Int = 2, maximumDelay: Duration = .seconds(4))
    {
        self.initialDelay = max(initialDelay, .zero)
        self.multiplier = max(multiplier, 1)
        self.maximumDelay = max(maximumDelay, self.initialDelay)
    }

    /// The longest wait before retry `retry` (1 for the first retry).
    public func ceiling(forRetry retry: Int) -> Duration {
        var ceiling = initialDelay
        guard ceiling > .zero, multiplier > 1 else { return ceiling }
        for _ in 1..<max(1, retry) {
            ceiling = ceiling * multiplier
            if ceiling >= maximumDelay { return maximumDelay }
        }
        return min(ceiling, maximumDelay)
    }

    /// The wait before retry `retry` for a random `unit` in `0 ..< 1`: `ceiling / 2 + unit × ceiling / 2`.
    public func delay(forRetry retry: Int, unit: Double) -> Duration {
        let half = ceiling(forRetry: retry) / .nanoseconds(1) / 2
        let unit = min(max(unit, 0), 1)
        return .nanoseconds(Int64((half + unit * half).rounded(.down)))
    }
}
