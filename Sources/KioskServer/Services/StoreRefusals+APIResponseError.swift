import KioskCore
import KioskStore

// How the store domain's refusals answer the API. The store types carry no HTTP: these conformances are the
// server's reading of each case, in exhaustive switches, so that a new case does not compile until it has its code.

extension ReceiptVerificationError: APIResponseError {
    /// The envelope code, which sets the status: 413, 400, 403, 503 or 500.
    public var errorCode: APIErrorCode {
        switch self {
        case .payloadTooLarge: .payloadTooLarge
        case .receiptMalformed: .receiptMalformed
        case .receiptInvalid, .environmentNotAccepted: .receiptInvalid
        case .storeUnavailable: .storeUnavailable
        case .storeMisconfigured: .storeMisconfigured
        }
    }

    /// `environment` for an environment this server does not accept; nil otherwise.
    public var errorReason: String? {
        switch self {
        case .environmentNotAccepted: "environment"
        case .payloadTooLarge, .receiptMalformed, .receiptInvalid, .storeUnavailable, .storeMisconfigured: nil
        }
    }

    /// `Retry-After` when the store asked to retry.
    public var headers: [String: String] {
        retryAfterSeconds.map { ["Retry-After": String($0)] } ?? [:]
    }
}

extension ReceiptVerificationError: CustomStringConvertible {
    /// `code: message`, for logs.
    public var description: String { "\(errorCode.rawValue): \(message)" }
}

extension SignedDataRefusal: APIResponseError {
    /// Always `transaction_invalid`; ``reason`` tells the cases apart.
    public var errorCode: APIErrorCode { .transactionInvalid }

    /// ``reason``.
    public var errorReason: String? { reason }

    /// Which check failed, machine-readable: the envelope's `reason`, and what the server logs of a refusal.
    public var reason: String {
        switch self {
        case .malformed: "malformed"
        case .unsupportedAlgorithm: "algorithm"
        case .chainLength: "chain_length"
        case .certificateMalformed: "certificate_malformed"
        case .missingAppleOID: "missing_oid"
        case .certificateExpired: "certificate_expired"
        case .untrustedChain: "untrusted_root"
        case .signatureInvalid: "signature"
        case .bundleMismatch: "bundle_id"
        case .environmentMismatch: "environment"
        }
    }
}

extension EntitlementRefusal: APIResponseError {
    /// `receipt_invalid` for a receipt of another app, `not_entitled` otherwise; both 403.
    public var errorCode: APIErrorCode {
        switch self {
        case .wrongBundle: .receiptInvalid
        case .notPurchased, .refunded, .expired, .notYetActive, .publishedOutsidePaidPeriod: .notEntitled
        }
    }
}
