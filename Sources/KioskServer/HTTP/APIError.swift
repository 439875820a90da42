import KioskCore

/// An error the server answers with the JSON envelope of API.md: a stable code, an HTTP status and a sentence.
public struct APIError: Error, Sendable, Equatable {
    /// The machine code.
    public let code: APIErrorCode
    /// A sentence a person understands. Never contains a receipt, token or secret.
    public let message: String
    /// Extra response headers (`Retry-After`, `Content-Range`).
    public let headers: [String: String]
    /// A machine-readable refinement of `code` (for `transaction_invalid`: which check failed), sent as the
    /// envelope's `reason`.
    public let reason: String?

    /// Creates an error.
    public init(_ code: APIErrorCode, _ message: String, headers: [String: String] = [:], reason: String? = nil) {
        self.code = code
        self.message = message
        self.headers = headers
        self.reason = reason
    }

    static func badRequest(_ message: String) -> APIError { APIError(.badRequest, message) }
    static func notFound(_ message: String) -> APIError { APIError(.notFound, message) }
}
