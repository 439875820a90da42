import KioskCore
import KioskStore

extension ExponentialBackoff {
    /// The wait before retry `retry`, drawing the jitter from `random`.
    public func delay(forRetry retry: Int, using random: inout JitterSource) -> Duration {
        delay(forRetry: retry, unit: random.nextUnit())
    }

    /// A `Retry-After` for a client when retry `retry` would be next: its ceiling in whole seconds, at least one.
    public func retryAfter(forRetry retry: Int) -> Duration {
        .seconds(ceiling(forRetry: retry).retryAfterSeconds)
    }
}
