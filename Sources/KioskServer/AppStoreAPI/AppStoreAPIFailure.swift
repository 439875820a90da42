import Foundation

/// The error body of the App Store Server API: `{"errorCode": 4040010, "errorMessage": "…"}`.
public struct AppStoreAPIErrorBody: Codable, Sendable, Hashable {
    /// Apple's error code, such as 4040010 (transaction ID not found) or 4290000 (rate limit exceeded).
    public var errorCode: Int
    /// Apple's message.
    public var errorMessage: String?

    /// The retryable error codes Apple lists: 4040002 (account not found), 4040004 (app not found), 4040006
    /// (original transaction ID not found) and 5000001 (general internal error), each with "retryable" in its name.
    public static let retryableCodes: Set<Int> = [4_040_002, 4_040_004, 4_040_006, 5_000_001]

    /// The error body in `data`, if it is one.
    public static func decode(_ data: Data) -> AppStoreAPIErrorBody? {
        try? JSONDecoder().decode(AppStoreAPIErrorBody.self, from: data)
    }
}

/// Why an App Store Server API call did not succeed. Holds no token, key or signed datum.
public enum AppStoreAPIFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// Apple refused the credentials (401) or answered a redirect (not followed): the operator must fix the key,
    /// key ID, issuer ID, bundle ID or base URL. The call's caller answers 500 `store_misconfigured`.
    case misconfigured(status: Int, errorCode: Int?)
    /// Apple answered that the request cannot succeed as sent: `status` (a 4xx but 401 and 429) with its
    /// `errorCode`, such as 4040010 for a transaction ID it does not know.
    case refused(status: Int, errorCode: Int?, message: String?)
    /// Apple could not be reached or kept failing (network errors, 5xx, 429, retryable codes) through every
    /// attempt; `retryAfter` is when to ask again, when known.
    case unavailable(retryAfter: Duration?)

    /// What happened, in a sentence, with what to fix for a misconfiguration.
    public var description: String {
        switch self {
        case .misconfigured(let status, let code):
            "the App Store Server API refused the credentials (\(status)\(code.map { ", error \($0)" } ?? "")): "
                + "check the key file, key ID, issuer ID and bundle ID (App Store Connect, Users and Access, "
                + "Integrations, In-App Purchase) and the API base URLs"
        case .refused(let status, let code, let message):
            "the App Store Server API answered \(status)\(code.map { " error \($0)" } ?? "")"
                + (message.map { ": \($0)" } ?? "")
        case .unavailable(let retryAfter):
            "the App Store Server API could not be reached" + (retryAfter.map { "; ask again in \($0)" } ?? "")
        }
    }
}
