import KioskCore

/// How a failed App Store Server API call answers a request that needed it: a misconfiguration (401, a redirect)
/// is the operator's to fix (500 `store_misconfigured`; the server logs what to fix); anything else is Apple not
/// answering usefully now (503 `store_unavailable`, with `Retry-After` when known).
extension AppStoreAPIFailure: APIResponseError {
    /// `store_misconfigured` or `store_unavailable`.
    public var errorCode: APIErrorCode {
        switch self {
        case .misconfigured: .storeMisconfigured
        case .refused, .unavailable: .storeUnavailable
        }
    }

    /// A sentence for the client, without the server's configuration.
    public var message: String {
        switch self {
        case .misconfigured: "The server's App Store Server API credentials were refused; its operator must fix them."
        case .refused: "The App Store Server API refused the server's request."
        case .unavailable: "The App Store Server API cannot be reached now; try again later."
        }
    }

    /// `app_store_api`: the envelope tells this store apart from `verifyReceipt`.
    public var errorReason: String? { "app_store_api" }

    /// `Retry-After` when Apple said when to ask again.
    public var headers: [String: String] {
        guard case .unavailable(let retryAfter?) = self else { return [:] }
        return ["Retry-After": String(max(1, retryAfter.components.seconds))]
    }

    /// The metric outcome of a call that failed this way.
    var outcome: String {
        switch self {
        case .misconfigured: "misconfigured"
        case .refused: "refused"
        case .unavailable: "unavailable"
        }
    }
}
