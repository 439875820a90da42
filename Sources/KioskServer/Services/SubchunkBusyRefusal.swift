import KioskCore

/// Why ``SubchunkService`` does not take a request now: the token, or the purchase it belongs to, already has as
/// many chunks being cut as ``SubchunkWorkBounds`` allow. Answered 429 with the code `too_many_requests` and
/// `Retry-After: 1`; the request succeeds once some of those cuts are done.
public enum SubchunkBusyRefusal: Error, Sendable, Hashable {
    /// The token has `limit` chunks being cut.
    case token(limit: Int)
    /// The purchase has `limit` chunks being cut, all its tokens together.
    case purchase(limit: Int)
}

extension SubchunkBusyRefusal: APIResponseError {
    /// `too_many_requests`, 429.
    public var errorCode: APIErrorCode { .tooManyRequests }

    /// `token_busy` or `purchase_busy`: which bound was reached.
    public var errorReason: String? {
        switch self {
        case .token: "token_busy"
        case .purchase: "purchase_busy"
        }
    }

    /// Which bound was reached, and when to ask again.
    public var message: String {
        switch self {
        case .token(let limit):
            "This download token already has \(limit) chunks being cut into subchunks; ask again in a moment."
        case .purchase(let limit):
            "This purchase already has \(limit) chunks being cut into subchunks, all its tokens together; ask again "
                + "in a moment."
        }
    }

    /// `Retry-After: 1`: cuts take milliseconds.
    public var headers: [String: String] { ["Retry-After": "1"] }
}
