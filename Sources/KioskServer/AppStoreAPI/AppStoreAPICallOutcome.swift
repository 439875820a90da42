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
        guard let outcome = Self.outcome(of: error) else { throw error }
        metrics.recordAppStoreAPICall(call, outcome: outcome)
        switch error {
        case let failure as AppStoreAPIFailure:
            if case .misconfigured = failure {
                logger.error("App Store Server API call refused", metadata: ["call": "\(call)", "fix": "\(failure)"])
                throw failure
            }
            logger.warning(
                "App Store Server API unavailable: deciding from locally verified data",
                metadata: ["call": "\(call)", "reason": "\(failure)"])
        case let refusal as SignedDataRefusal:
            logger.error(
                "App Store Server API answer did not verify: deciding from locally verified data",
                metadata: ["call": "\(call)", "reason": "\(refusal.reason)"])
        default:
            logger.error(
                "App Store Server API answer unusable: deciding from locally verified data",
                metadata: ["call": "\(call)", "reason": "\(error)"])
        }
        metrics.recordAppStoreAPIFallback(call)
    }

    /// Counts `error` from `call`, a call nothing decides in its place (a consumption answer), logs it (a
    /// misconfiguration at error, with what to fix) and returns why the call failed, in a sentence; rethrows an
    /// error that is not the API's (a cancellation).
    func abandoned(_ call: String, _ error: any Error, logger: Logger) throws -> String {
        guard let outcome = Self.outcome(of: error) else { throw error }
        metrics.recordAppStoreAPICall(call, outcome: outcome)
        let reason = (error as? SignedDataRefusal)?.reason ?? "\(error)"
        if case .misconfigured? = error as? AppStoreAPIFailure {
            logger.error("App Store Server API call refused", metadata: ["call": "\(call)", "fix": "\(reason)"])
        } else {
            logger.warning("App Store Server API call failed", metadata: ["call": "\(call)", "reason": "\(reason)"])
        }
        return reason
    }

    /// The outcome an error of the API counts as (`misconfigured`, `refused`, `unavailable`, or `invalid` for an
    /// answer that does not decode or verify); nil for an error that is not the API's.
    private static func outcome(of error: any Error) -> String? {
        switch error {
        case let failure as AppStoreAPIFailure: failure.outcome
        case is SignedDataRefusal, is AppStoreAPIAnswerError: "invalid"
        default: nil
        }
    }
}
