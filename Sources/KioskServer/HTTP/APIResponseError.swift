import HTTPTypes
import KioskCore

/// An error that knows how the API answers it: the JSON error envelope of API.md, with its code, status, message,
/// reason and headers. The counterpart of Hummingbird's `HTTPResponseError` for Kiosk's services: they throw
/// domain refusals (``GrantRefusal``, ``ContentRefusal``, ``GrantTokenRefusal``, ``SandboxRefusal``, the store's
/// ``ReceiptVerificationError``, ``SignedDataRefusal`` and ``EntitlementRefusal``) that conform, and
/// ``ErrorMiddleware`` renders every one of them in one place.
public protocol APIResponseError: Error, Sendable {
    /// The envelope's machine code; it also sets the HTTP status.
    var errorCode: APIErrorCode { get }
    /// A sentence a person understands. Never contains a receipt, token or secret.
    var message: String { get }
    /// A machine-readable refinement of ``errorCode``, sent as the envelope's `reason`; nil by default.
    var errorReason: String? { get }
    /// Extra response headers (`WWW-Authenticate`, `Retry-After`, `Content-Range`); none by default.
    var headers: [String: String] { get }
}

extension APIResponseError {
    /// No refinement of the code.
    public var errorReason: String? { nil }
    /// No extra headers.
    public var headers: [String: String] { [:] }
    /// The HTTP status the API answers with: the code's.
    public var status: HTTPResponse.Status { HTTPResponse.Status(code: errorCode.httpStatus) }
}

extension APIError: APIResponseError {
    /// The machine code.
    public var errorCode: APIErrorCode { code }
    /// The envelope's `reason`.
    public var errorReason: String? { reason }
}
