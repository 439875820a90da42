import AsyncHTTPClient
import Foundation
import NIOCore

/// The verifier's ``StoreTransport`` to Apple's `verifyReceipt` endpoints (or any server speaking that contract),
/// over AsyncHTTPClient.
///
/// Redirects are never followed: a 3xx answer is returned as it is, and the verifier treats it as a misconfigured
/// store (`store_misconfigured`). Following one would resend the receipt and the shared secret to whatever the
/// `Location` names, and trust that host's answer.
struct HTTPStoreTransport: StoreTransport {
    /// The most the store's answer may weigh; Apple's are far smaller.
    static let maxResponseSize = 16 * 1024 * 1024

    /// One client for every call of the process to a store (Apple's `verifyReceipt`, and the S3-compatible store of
    /// ``S3ObjectStore``), following no redirects. Like `HTTPClient.shared`, it lives as long as the process and is
    /// never shut down.
    static let noRedirectsClient: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    let client: HTTPClient = Self.noRedirectsClient

    func post(_ body: Data, to url: URL, timeout: Duration) async throws -> StoreHTTPResponse {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await client.execute(request, timeout: TimeAmount(timeout))
            let buffer = try await response.body.collect(upTo: Self.maxResponseSize)
            return StoreHTTPResponse(status: Int(response.status.code), body: Data(buffer.readableBytesView))
        } catch let error as HTTPClientError
            where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout
        {
            throw StoreTransportError.timeout
        }
    }
}
