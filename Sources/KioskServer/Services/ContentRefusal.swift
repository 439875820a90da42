import KioskCore

/// Why ``ContentAccess`` does not open a file.
public enum ContentRefusal: Error, Sendable, Hashable {
    /// No download token was sent (`token_missing`, with `WWW-Authenticate: Bearer`).
    case tokenMissing
    /// The token is not valid, has expired, or is for another product or version.
    case token(GrantTokenRefusal)
    /// The purchase that paid for the token was refunded or revoked (`transaction_revoked`).
    case revoked
    /// The catalog has no such product (`not_found`).
    case unknownProduct(String)
    /// The product is served at another version now (`version_gone`).
    case versionGone(productID: String, version: String)
    /// The product version has no such file (`not_found`).
    case unknownFile(productID: String, path: String)
    /// The file changes on disk while it is being opened, or its bytes are not those the catalog hashed when they
    /// are read to cut a chunk (it is being written now): `internal_error` with reason `file_changing` and
    /// `Retry-After: 1`.
    case fileChanging(productID: String, path: String)
}

extension ContentRefusal: APIResponseError {
    /// The envelope code; a token refusal keeps its own.
    public var errorCode: APIErrorCode {
        switch self {
        case .tokenMissing: .tokenMissing
        case .token(let refusal): refusal.errorCode
        case .revoked: .transactionRevoked
        case .unknownProduct, .unknownFile: .notFound
        case .versionGone: .versionGone
        case .fileChanging: .internalError
        }
    }

    /// `file_changing` for a file being written now.
    public var errorReason: String? {
        if case .fileChanging = self { "file_changing" } else { nil }
    }

    /// What is wrong and what the client should do.
    public var message: String {
        switch self {
        case .tokenMissing:
            "This content needs a download token: send Authorization: Bearer <token> from a grant."
        case .token(let refusal): refusal.message
        case .revoked:
            "The purchase this download token was issued for was refunded or revoked, so it no longer opens content."
        case .unknownProduct(let id): "There is no product '\(id)'."
        case .versionGone(let id, let version):
            "Version \(version) of '\(id)' is no longer served; ask for a new grant."
        case .unknownFile(let id, let path): "'\(id)' has no file '\(path)'."
        case .fileChanging(let id, let path):
            "The file '\(path)' of '\(id)' is being changed on the server right now; try again in a moment."
        }
    }

    /// `WWW-Authenticate: Bearer` when no token was sent, `Retry-After` for a file being changed.
    public var headers: [String: String] {
        switch self {
        case .tokenMissing: ["WWW-Authenticate": "Bearer"]
        case .fileChanging: ["Retry-After": "1"]
        default: [:]
        }
    }
}
