import KioskCore

/// Why a grant token does not open what it was sent for.
public enum GrantTokenRefusal: Error, Sendable, Hashable {
    /// Not a token this server signed, or changed since (`token_invalid`).
    case invalid
    /// Signed, but past its expiry (`token_expired`).
    case expired
    /// Signed and live, but for another product or version (`token_scope`).
    case outOfScope
}

extension GrantTokenRefusal: APIResponseError {
    /// `token_invalid`, `token_expired` or `token_scope`.
    public var errorCode: APIErrorCode {
        switch self {
        case .invalid: .tokenInvalid
        case .expired: .tokenExpired
        case .outOfScope: .tokenScope
        }
    }

    /// What the client should do.
    public var message: String {
        switch self {
        case .invalid: "The download token is not valid. Ask for a new grant."
        case .expired: "The download token has expired. Ask for a new grant with the same receipt."
        case .outOfScope: "This download token is for another product or version."
        }
    }
}
