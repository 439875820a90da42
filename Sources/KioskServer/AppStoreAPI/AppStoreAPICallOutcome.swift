import KioskStore
import Logging

/// How a service reads the failure of an App Store Server API call it could do without: a misconfiguration is
/// thrown (the request answers 500 `store_misconfigured`, and an error line says what to fix); Apple unreachable, a
/// refusal, or an answer that does not verify leave the decision to locally verified data (availability first),
/// counted as a fallback. Every call is counted with its outcome.
struct AppStoreAPICallOutcome: Sendable {
    let metrics: ServerMetrics

    /// Counts a call of `call` that succeeded.
    func succeeded(_ call: String) {
        metrics.recordAppStoreAPICall(call, outcome: "ok")
    }

    /// Counts `error` from `call` and rethrows it when the caller must not go on (a misconfiguration, a
    /// cancellation); otherwise logs it and counts a fallback.
    func failed(_ call: String, _ error: any Error, logger: Logger) throws {
        switch error {
        case let failure as AppStoreAPIFailure:
            metrics.recordAppStoreAPICall(call, outcome: failure.outcome)
            if case .misconfigured = failure {
                logger.error("App Store Server API call refused", metadata: ["call": "\(call)", "fix": "\(failure)"])
                throw failure
            }
            logger.warning(
                "App Store Server API unavailable: deciding from locally verified data",
                metadata: ["call": "\(call)", "reason": "\(failure)"])
        case let refusal as SignedDataRefusal:
            metrics.recordAppStoreAPICall(call, outcome: "invalid")
            logger.error(
                "App Store Server API answer did not verify: deciding from locally verified data",
                metadata: ["call": "\(call)", "reason": "\(refusal.reason)"])
        case let unusable as AppStoreAPIAnswerError:
            metrics.recordAppStoreAPICall(call, outcome: "invalid")
            logger.error(
                "App Store Server API answer unusable: deciding from locally verified data",
                metadata: ["call": "\(call)", "reason": "\(unusable)"])
        default:
            throw error
        }
        metrics.recordAppStoreAPIFallback(call)
    }
}
