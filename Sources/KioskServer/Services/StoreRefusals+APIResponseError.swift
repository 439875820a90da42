import KioskCore
import KioskStore

// How the store domain's refusals answer the API. The store types stay free of HTTP; these conformances are the
// server's reading of them.

extension ReceiptVerificationError: APIResponseError {
    /// The envelope code of ``code``.
    public var errorCode: APIErrorCode { APIErrorCode(rawValue: code) ?? .internalError }
    /// ``reason``: `environment` for an environment this server does not accept.
    public var errorReason: String? { reason }
    /// `Retry-After` when the store asked to retry.
    public var headers: [String: String] {
        retryAfterSeconds.map { ["Retry-After": String($0)] } ?? [:]
    }
}

extension SignedDataRefusal: APIResponseError {
    /// Always `transaction_invalid`; ``reason`` tells the cases apart.
    public var errorCode: APIErrorCode { .transactionInvalid }
    /// ``reason``.
    public var errorReason: String? { reason }
}

extension EntitlementRefusal: APIResponseError {
    /// The envelope code of ``code``: `receipt_invalid` or `not_entitled`.
    public var errorCode: APIErrorCode { APIErrorCode(rawValue: code) ?? .notEntitled }
}
