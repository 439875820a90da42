import AsyncHTTPClient
import Foundation
import NIOCore

/// The verifier's ``StoreTransport`` to Apple's `verifyReceipt` endpoints (or any server speaking that contract),
/// over AsyncHTTPClient.
struct HTTPStoreTransport: StoreTransport {
    /// The most the store's answer may weigh; Apple's are far smaller.
    static let maxResponseSize = 16 * 1024 * 1024

    let client: HTTPClient

    func post(_ body: Data, to url: URL, timeout: Duration) async throws -> StoreHTTPResponse {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))
        let deadline = TimeAmount.nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
        do {
            let response = try await client.execute(request, timeout: deadline)
            let buffer = try await response.body.collect(upTo: Self.maxResponseSize)
            return StoreHTTPResponse(status: Int(response.status.code), body: Data(buffer.readableBytesView))
        } catch let error as HTTPClientError
            where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout
        {
            throw StoreTransportError.timeout
        }
    }
}
