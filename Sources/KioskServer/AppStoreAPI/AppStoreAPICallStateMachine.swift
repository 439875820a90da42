import Foundation
import KioskCore

/// The retry rules of one App Store Server API call, in the style of SwiftNIO's state machines: the driver
/// (``AppStoreAPIClient``) reports each answer or transport failure and performs the ``Action`` it gets back. No
/// I/O, no clock of its own (the time comes with each answer), jitter from an injected ``JitterSource``.
///
/// The rules:
/// - 2xx → succeed.
/// - 401, and any 3xx (never followed: the token must not go elsewhere) → fail, ``AppStoreAPIFailure/misconfigured``.
/// - 429 → retry after its `Retry-After`, which Apple sends as a UNIX time in milliseconds (never sooner than the
///   backoff, never later than ``Configuration/longestRetryAfter``: beyond it the call fails `unavailable` with
///   that time).
/// - 5xx, the retryable error codes (``AppStoreAPIErrorBody/retryableCodes``), transport failures and timeouts →
///   retry after the backoff.
/// - Each of those uses one of ``Configuration/maxAttempts``; after the last the call fails
///   ``AppStoreAPIFailure/unavailable(retryAfter:)``.
/// - Any other status → fail, ``AppStoreAPIFailure/refused(status:errorCode:message:)``.
struct AppStoreAPICallStateMachine: Sendable {
    /// Limits of one call.
    struct Configuration: Sendable, Hashable {
        /// How many attempts a call may make; at least 1.
        var maxAttempts = 4
        /// The waits between them.
        var backoff = ExponentialBackoff()
        /// The longest `Retry-After` waited for within one call.
        var longestRetryAfter = Duration.seconds(30)
    }

    /// What the driver does next.
    enum Action: Sendable, Hashable {
        /// The answer is the call's result.
        case succeed
        /// Send the request again after this wait.
        case retry(after: Duration)
        /// The call fails.
        case fail(AppStoreAPIFailure)
    }

    private let configuration: Configuration
    private var jitter: JitterSource
    /// Attempts made so far (the first included).
    private var attempts = 1

    /// A call that made its first attempt.
    init(configuration: Configuration = Configuration(), jitter: JitterSource = .system) {
        precondition(configuration.maxAttempts >= 1, "maxAttempts must be at least 1")
        self.configuration = configuration
        self.jitter = jitter
    }

    /// Apple answered `status`, with `errorCode` when its body was an error body, and `Retry-After` when it had one
    /// (`retryAfterMilliseconds`, a UNIX time), at `now`.
    mutating func answered(
        status: Int, errorCode: Int?, errorMessage: String? = nil, retryAfterMilliseconds: Int64?, now: Date
    ) -> Action {
        switch status {
        case 200..<300:
            return .succeed
        case 300..<400, 401:
            return .fail(.misconfigured(status: status, errorCode: errorCode))
        case 429:
            let backoff = configuration.backoff.delay(forRetry: attempts, using: &jitter)
            guard let retryAfterMilliseconds else { return transient(wait: backoff) }
            let due = Double(retryAfterMilliseconds) / 1000 - now.timeIntervalSince1970
            let wait = Duration.milliseconds(Int64(max(0, due) * 1000))
            guard wait <= configuration.longestRetryAfter else { return .fail(.unavailable(retryAfter: wait)) }
            return transient(wait: max(wait, backoff))
        case 500..<600:
            return transient(wait: configuration.backoff.delay(forRetry: attempts, using: &jitter))
        default:
            if let errorCode, AppStoreAPIErrorBody.retryableCodes.contains(errorCode) {
                return transient(wait: configuration.backoff.delay(forRetry: attempts, using: &jitter))
            }
            return .fail(.refused(status: status, errorCode: errorCode, message: errorMessage))
        }
    }

    /// The request failed before an answer (connection refused or reset, timeout).
    mutating func failedToConnect() -> Action {
        transient(wait: configuration.backoff.delay(forRetry: attempts, using: &jitter))
    }

    /// A transient failure: another attempt after `wait`, or `unavailable` after the last.
    private mutating func transient(wait: Duration) -> Action {
        guard attempts < configuration.maxAttempts else {
            return .fail(.unavailable(retryAfter: configuration.backoff.retryAfter(forRetry: attempts)))
        }
        attempts += 1
        return .retry(after: wait)
    }
}
