import Foundation

/// Sends a `verifyReceipt` request body to a store endpoint.
///
/// Kiosk has two: one over AsyncHTTPClient for Apple's endpoints, and an in-process one for the sandbox store.
/// Implementations should cap the size of the answer they read and honour `timeout`, throwing
/// ``StoreTransportError/timeout`` when it passes. Any other thrown error counts as a network failure; both are
/// retried.
public protocol StoreTransport: Sendable {
    /// POSTs `body` (JSON) to `url` and returns the answer, whatever its HTTP status.
    func post(_ body: Data, to url: URL, timeout: Duration) async throws -> StoreHTTPResponse
}

/// An HTTP answer from a store endpoint.
public struct StoreHTTPResponse: Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// The body.
    public var body: Data

    /// Creates an answer.
    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}

/// Failures a ``StoreTransport`` reports in a way the verifier distinguishes.
public enum StoreTransportError: Error, Sendable, Hashable {
    /// The store did not answer within the timeout.
    case timeout
}
