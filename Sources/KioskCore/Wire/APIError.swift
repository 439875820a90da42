/// The stable machine codes of the server's errors (see API.md, "Errors").
public enum APIErrorCode: String, Codable, Sendable, CaseIterable {
    case badRequest = "bad_request"
    case receiptMalformed = "receipt_malformed"
    case payloadTooLarge = "payload_too_large"
    case receiptInvalid = "receipt_invalid"
    case notEntitled = "not_entitled"
    case tokenMissing = "token_missing"
    case tokenInvalid = "token_invalid"
    case tokenExpired = "token_expired"
    case tokenScope = "token_scope"
    case notFound = "not_found"
    case methodNotAllowed = "method_not_allowed"
    case versionGone = "version_gone"
    case rangeNotSatisfiable = "range_not_satisfiable"
    case preconditionFailed = "precondition_failed"
    case storeUnavailable = "store_unavailable"
    case storeMisconfigured = "store_misconfigured"
    case transactionInvalid = "transaction_invalid"
    case transactionRevoked = "transaction_revoked"
    case installationLimit = "installation_limit"
    case removalLimit = "removal_limit"
    case tooManyRequests = "too_many_requests"
    case internalError = "internal_error"
    case notReady = "not_ready"
    case databaseUnavailable = "database_unavailable"

    /// The HTTP status the server answers this code with.
    public var httpStatus: Int {
        switch self {
        case .badRequest, .receiptMalformed: 400
        case .tokenMissing, .tokenInvalid, .tokenExpired: 401
        case .receiptInvalid, .notEntitled, .tokenScope, .transactionInvalid, .transactionRevoked, .installationLimit,
            .removalLimit:
            403
        case .notFound: 404
        case .methodNotAllowed: 405
        case .versionGone: 410
        case .preconditionFailed: 412
        case .payloadTooLarge: 413
        case .rangeNotSatisfiable: 416
        case .tooManyRequests: 429
        case .storeMisconfigured, .internalError: 500
        case .storeUnavailable, .notReady, .databaseUnavailable: 503
        }
    }
}

/// The body of every error response: `{"error": {"code": "…", "message": "…"}}`.
public struct APIErrorEnvelope: Codable, Sendable, Hashable {
    /// The error itself.
    public struct Body: Codable, Sendable, Hashable {
        /// The machine code. Kept as a string so that a client understands codes newer than itself.
        public var code: String
        /// A sentence a person understands.
        public var message: String
        /// For some codes, which check failed, machine-readable (for example `chain_length` for a
        /// `transaction_invalid`); absent otherwise.
        public var reason: String?

        /// Creates an error body.
        public init(code: String, message: String, reason: String? = nil) {
            self.code = code
            self.message = message
            self.reason = reason
        }
    }

    /// The error.
    public var error: Body

    /// Creates an envelope.
    public init(code: String, message: String) { self.error = Body(code: code, message: message) }

    /// Creates an envelope from a known code.
    public init(code: APIErrorCode, message: String) { self.init(code: code.rawValue, message: message) }
}
