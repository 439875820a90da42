import Foundation
import KioskCore

/// How transient failures are retried: exponential backoff with jitter, honouring `Retry-After`.
///
/// The whole policy, wherever it applies:
/// - A transfer that fails transiently is retried after ``delay(attempt:retryAfter:random:)``, up to
///   ``maximumAttempts`` in a row (the download's machine decides: `DownloadStateMachine`); a server that does not
///   answer at all is waited for instead, with probes at the same delays, using up no attempt.
/// - Progress (bytes kept on disk, a file or a chunk verified) starts the attempts over.
/// - A ranged request whose connection breaks after bringing bytes is continued at once from the next byte, with
///   no attempt used (`continuesAtOnce(brokenRequestFrom:receivedUpTo:)`).
public struct RetryPolicy: Sendable, Hashable {
    /// The delay before the first retry, in seconds.
    public var baseDelay: Double
    /// The longest delay between two attempts, in seconds.
    public var maximumDelay: Double
    /// How many attempts in a row may fail transiently before the download fails.
    public var maximumAttempts: Int

    /// Creates a policy. The defaults: 1 s, doubling up to 60 s, 8 attempts.
    public init(baseDelay: Double = 1, maximumDelay: Double = 60, maximumAttempts: Int = 8) {
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.maximumAttempts = maximumAttempts
    }

    /// The delay before attempt number `attempt` (1 for the first retry).
    ///
    /// Without `retryAfter`: "equal jitter" — half of `min(maximumDelay, baseDelay × 2^(attempt−1))` plus a random
    /// share (`random` in 0…1) of the other half. With `retryAfter` (the server's `Retry-After`, in seconds):
    /// exactly that, capped at ten times `maximumDelay` and at `RetryAfter.maximumSeconds` (one hour).
    public func delay(attempt: Int, retryAfter: Double? = nil, random: Double) -> Double {
        if let retryAfter, retryAfter >= 0 { return min(retryAfter, maximumDelay * 10, RetryAfter.maximumSeconds) }
        return backoff.delay(forRetry: attempt, unit: random).timeInterval
    }

    /// Whether a ranged request whose connection broke goes on at once from the next byte instead of failing its
    /// transfer: when it brought bytes (`received` past `first`, where it started). A network that cuts every
    /// connection after a few hundred KiB still gets each range; a request that brought nothing fails the transfer,
    /// which is retried after the backoff.
    static func continuesAtOnce(brokenRequestFrom first: Int64, receivedUpTo received: Int64) -> Bool {
        received > first
    }

    /// The ceilings: `baseDelay` doubling up to `maximumDelay` (a delay that is not a finite number of seconds up to
    /// a year counts as a year).
    private var backoff: ExponentialBackoff {
        func duration(_ seconds: Double) -> Duration {
            .seconds(seconds.isFinite ? min(seconds, 31_536_000) : 31_536_000)
        }
        return ExponentialBackoff(
            initialDelay: duration(baseDelay), multiplier: 2, maximumDelay: duration(maximumDelay))
    }
}
