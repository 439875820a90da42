import KioskStore

/// What one call to a store endpoint gave, reported to ``ReceiptVerifier``'s `onStoreCall` hook for metrics
/// and logs. It never contains the receipt.
public struct StoreCallReport: Sendable, Hashable {
    /// How a store call ended.
    public enum Outcome: Sendable, Hashable {
        /// A decoded `verifyReceipt` answer with this status.
        case status(Int)
        /// An HTTP status outside 2xx (the body is not read).
        case httpStatus(Int)
        /// A 2xx answer whose body is not a `verifyReceipt` answer.
        case undecodable
        /// No answer: a timeout or another network failure.
        case transportFailure(isTimeout: Bool)

        /// A short label for metrics: `"0"`, `"21007"`, `"http_503"`, `"undecodable"`, `"timeout"`, `"transport_error"`.
        public var label: String {
            switch self {
            case .status(let status): String(status)
            case .httpStatus(let status): "http_\(status)"
            case .undecodable: "undecodable"
            case .transportFailure(isTimeout: true): "timeout"
            case .transportFailure(isTimeout: false): "transport_error"
            }
        }
    }

    /// The environment called.
    public var environment: StoreEnvironment
    /// How the call ended.
    public var outcome: Outcome
    /// How long it took.
    public var duration: Duration

    /// Creates a report.
    public init(environment: StoreEnvironment, outcome: Outcome, duration: Duration) {
        self.environment = environment
        self.outcome = outcome
        self.duration = duration
    }
}
