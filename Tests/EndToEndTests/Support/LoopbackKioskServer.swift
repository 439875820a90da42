import Foundation
import KioskCore

/// A Kiosk server on a loopback port, in this process (``TestServer``) or in a child (``ServeProcess``), and what
/// the tests ask of it over plain HTTP/1.1.
protocol LoopbackKioskServer: Sendable {
    /// The bound port on 127.0.0.1.
    var port: Int { get }
    /// Stops the server and removes its folders.
    func stop() async
}

extension LoopbackKioskServer {
    /// Runs `body` against this server, then stops it, whether `body` returns or throws.
    func serving<T>(_ body: (Self) async throws -> T) async throws -> T {
        do {
            let result = try await body(self)
            await stop()
            return result
        } catch {
            await stop()
            throw error
        }
    }

    /// Sends a raw HTTP/1.1 request to the server.
    func send(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: Data? = nil
    ) async throws -> RawHTTPResponse {
        try await RawHTTP.send(port: port, method: method, target: target, headers: headers, body: body)
    }

    /// Sends a JSON body and decodes a JSON answer of type `T` (failing the test on an unexpected status).
    func postJSON<Body: Encodable, T: Decodable>(
        _ target: String, _ body: Body, expecting status: Int = 200, as type: T.Type
    ) async throws -> T {
        let response = try await post(target, body)
        guard response.status == status else {
            throw TestServerError.unexpected(
                status: response.status, body: String(decoding: response.body, as: UTF8.self))
        }
        return try KioskJSON.decode(T.self, from: response.body)
    }

    /// Posts a JSON body and returns the raw answer (for refusals).
    func post<Body: Encodable>(_ target: String, _ body: Body) async throws -> RawHTTPResponse {
        try await send(
            "POST", target, headers: [("Content-Type", "application/json")], body: try KioskJSON.encode(body))
    }

    /// Buys a product from the sandbox store.
    func buy(_ productID: String, user: String = "tester", quantity: Int? = nil) async throws -> SandboxPurchaseResponse
    {
        try await postJSON(
            "/sandbox/purchases", SandboxPurchaseRequest(productID: productID, quantity: quantity, user: user),
            expecting: 201, as: SandboxPurchaseResponse.self)
    }

    /// Refunds a sandbox transaction.
    func refund(_ transactionID: String) async throws {
        _ = try await postJSON(
            "/sandbox/refunds", SandboxRefundRequest(transactionID: transactionID), as: SandboxRefundResponse.self)
    }

    /// Asks for a grant with a receipt, from the tests' installation.
    func grant(_ productID: String, receipt: String) async throws -> Grant {
        try await grant(productID, proof: .receipt(receipt))
    }

    /// Asks for a grant with a receipt or a signed transaction, from an installation.
    func grant(
        _ productID: String, proof: PurchaseProof, installationID: String = TestServer.installationID
    ) async throws -> Grant {
        try await postJSON(
            "/v1/downloads", GrantRequest(proof: proof, productID: productID, installationID: installationID),
            as: Grant.self)
    }

    /// Makes the sandbox store change a purchase and notify the server.
    func notify(_ transactionID: String, _ kind: SandboxNotificationKind, graceDays: Int? = nil) async throws
        -> SandboxNotificationResponse
    {
        try await postJSON(
            "/sandbox/notifications",
            SandboxNotificationRequest(transactionID: transactionID, kind: kind, graceDays: graceDays),
            as: SandboxNotificationResponse.self)
    }

    /// The value of one series in `/metrics` (`name` or `name{labels}`), 0 when the series is absent.
    func metric(_ series: String) async throws -> Double {
        let text = try await send("GET", "/metrics").text
        return text.split(separator: "\n").first { $0.hasPrefix(series + " ") }
            .flatMap { Double($0.dropFirst(series.count + 1)) } ?? 0
    }
}
