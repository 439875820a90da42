import KioskCore
import KioskStore

/// The retry and redirect rules of one receipt verification against Apple's `verifyReceipt` contract.
///
/// Written in the style of SwiftNIO's state machines: the driver (``ReceiptVerifier``) reports each event and
/// performs the ``Action`` it gets back. The machine does no I/O and reads no clock; its only randomness, the
/// backoff jitter, comes from the injected ``JitterSource``.
///
/// The rules:
/// - Production first. `21007` from production ("a sandbox receipt") → sandbox; `21008` from sandbox
///   ("a production receipt") → production. One such redirect per verification: a second one, or a redirect
///   code from the wrong environment, is a ping-pong and fails with `receiptInvalid`.
/// - `21002` from production → one retry at sandbox (a sandbox store may be the only one that can read it);
///   `21002` again, or from sandbox → `receiptMalformed(21002)`.
/// - `0` and `21006` (valid, subscription expired) → succeed, if the answer carries a receipt.
/// - `21005`, `21009`, `21100`–`21199` → retry the same environment after a backoff when the answer's retry
///   flag is true, otherwise `storeUnavailable`.
/// - HTTP 5xx, 408 and 429, transport failures, timeouts, and 2xx answers that cannot be decoded (or succeed
///   without a receipt) → retry the same environment after a backoff.
/// - Each of those transient failures uses one of ``Configuration/maxAttempts``; the last one fails with
///   `storeUnavailable(retryAfter:)`. Redirects do not use attempts; they are bounded on their own.
/// - `21003`, `21010` and unknown statuses → `receiptInvalid`; `21000`, `21001`, `21004` and any other HTTP
///   status outside 2xx/5xx (a redirect too: it is never followed) → `storeMisconfigured`.
/// - Only the ``Configuration/environments`` accepted are asked after production, and a receipt valid in another
///   one fails with `environmentNotAccepted`: with `Production` alone, `21007` ends the verification without
///   sending the receipt to the sandbox.
public struct ReceiptVerificationStateMachine: Sendable {
    /// Limits of one verification.
    public struct Configuration: Sendable, Hashable {
        /// How many store calls may fail transiently before the verification fails; at least 1.
        public var maxAttempts: Int
        /// The waits between those calls.
        public var backoff: ExponentialBackoff
        /// The environments whose receipts are accepted; not empty.
        public var environments: Set<StoreEnvironment>

        /// Creates a configuration; by default 4 attempts with 250 ms…4 s backoff, both environments accepted.
        public init(
            maxAttempts: Int = 4, backoff: ExponentialBackoff = ExponentialBackoff(),
            environments: Set<StoreEnvironment> = Set(StoreEnvironment.allCases)
        ) {
            precondition(maxAttempts >= 1, "maxAttempts must be at least 1")
            precondition(!environments.isEmpty, "at least one environment must be accepted")
            self.maxAttempts = maxAttempts
            self.backoff = backoff
            self.environments = environments
        }
    }

    /// What the driver must do next.
    public enum Action: Sendable, Hashable {
        /// Send the request to this environment's endpoint, then report the outcome.
        case post(StoreEnvironment)
        /// Wait this long, call ``backoffElapsed()``, then send the request to the environment.
        case backoff(Duration, then: StoreEnvironment)
        /// Verification is done: the answer (status `0` or `21006`, with a receipt) and who gave it.
        case succeed(AppleVerifyReceiptResponse, StoreEnvironment)
        /// Verification is done and failed.
        case fail(ReceiptVerificationError)
    }

    /// Progress through one verification.
    private struct Progress: Sendable {
        /// The environment being (or about to be) asked.
        var environment: StoreEnvironment
        /// Transient failures so far.
        var failures = 0
        /// Whether a `21007`/`21008` redirect has happened.
        var redirected = false
        /// Whether the one `21002` retry at sandbox has happened.
        var retriedMalformed = false
    }

    private enum State: Sendable {
        case idle
        case awaitingResponse(Progress)
        case backingOff(Progress)
        case finished
    }

    private var state: State = .idle
    private var jitter: JitterSource
    /// The limits this machine applies.
    public let configuration: Configuration

    /// Creates a machine for one verification.
    public init(configuration: Configuration = Configuration(), jitter: JitterSource = .system) {
        self.configuration = configuration
        self.jitter = jitter
    }

    /// Whether the machine has returned `succeed` or `fail`.
    public var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    /// Begins the verification: ask production.
    public mutating func start() -> Action {
        guard case .idle = state else { preconditionFailure("start() called twice") }
        return post(.production, Progress(environment: .production))
    }

    /// Reports the store's answer to the last `post`.
    ///
    /// - Parameters:
    ///   - httpStatus: The HTTP status code.
    ///   - body: The decoded answer, or `nil` when the body was not a `verifyReceipt` answer.
    public mutating func receivedResponse(httpStatus: Int, body: AppleVerifyReceiptResponse?) -> Action {
        guard case .awaitingResponse(var progress) = state else {
            preconditionFailure("receivedResponse(httpStatus:body:) without a post in flight")
        }
        switch httpStatus {
        case 200..<300:
            guard let body else { return retry(&progress, status: nil) }
            return received(body, &progress)
        case 408, 429, 500..<600:
            return retry(&progress, status: nil)
        default:
            return finish(.fail(.storeMisconfigured(status: nil, httpStatus: httpStatus)))
        }
    }

    /// Reports that the last `post` got no answer.
    ///
    /// Timeouts and other failures are treated alike: the store may or may not have seen the request, and asking
    /// it again is harmless because verification changes nothing.
    public mutating func transportFailed(isTimeout: Bool) -> Action {
        guard case .awaitingResponse(var progress) = state else {
            preconditionFailure("transportFailed(isTimeout:) without a post in flight")
        }
        return retry(&progress, status: nil)
    }

    /// Reports that the wait of the last `backoff` is over.
    public mutating func backoffElapsed() -> Action {
        guard case .backingOff(let progress) = state else { preconditionFailure("backoffElapsed() without a backoff") }
        return post(progress.environment, progress)
    }

    // MARK: - Transitions

    private mutating func received(_ body: AppleVerifyReceiptResponse, _ progress: inout Progress) -> Action {
        let status = body.status
        switch status {
        case 0, 21006:
            guard body.receipt != nil else { return retry(&progress, status: nil) }
            guard configuration.environments.contains(progress.environment) else {
                return finish(.fail(.environmentNotAccepted(progress.environment)))
            }
            return finish(.succeed(body, progress.environment))
        case 21007 where progress.environment == .production && !progress.redirected,
            21008 where progress.environment == .sandbox && !progress.redirected:
            progress.redirected = true
            let other: StoreEnvironment = progress.environment == .production ? .sandbox : .production
            guard configuration.environments.contains(other) else {
                return finish(.fail(.environmentNotAccepted(other)))
            }
            return post(other, progress)
        case 21007, 21008:
            return finish(.fail(.receiptInvalid(status: status)))
        case 21002
        where progress.environment == .production && !progress.retriedMalformed
            && configuration.environments.contains(.sandbox):
            progress.retriedMalformed = true
            return post(.sandbox, progress)
        case 21002:
            return finish(.fail(.receiptMalformed(status: status)))
        case 21003, 21010:
            return finish(.fail(.receiptInvalid(status: status)))
        case 21000, 21001, 21004:
            return finish(.fail(.storeMisconfigured(status: status)))
        case 21005, 21009, 21100...21199:
            if body.isRetryable == true { return retry(&progress, status: status) }
            let retryAfter = configuration.backoff.retryAfter(forRetry: progress.failures + 1)
            return finish(.fail(.storeUnavailable(retryAfter: retryAfter, status: status)))
        default:
            return finish(.fail(.receiptInvalid(status: status)))
        }
    }

    private mutating func retry(_ progress: inout Progress, status: Int?) -> Action {
        progress.failures += 1
        guard progress.failures < configuration.maxAttempts else {
            let retryAfter = configuration.backoff.retryAfter(forRetry: progress.failures)
            return finish(.fail(.storeUnavailable(retryAfter: retryAfter, status: status)))
        }
        state = .backingOff(progress)
        return .backoff(
            configuration.backoff.delay(forRetry: progress.failures, using: &jitter), then: progress.environment)
    }

    private mutating func post(_ environment: StoreEnvironment, _ progress: Progress) -> Action {
        var progress = progress
        progress.environment = environment
        state = .awaitingResponse(progress)
        return .post(environment)
    }

    private mutating func finish(_ action: Action) -> Action {
        state = .finished
        return action
    }
}
