import Foundation
import KioskStore

/// The verifier's ``StoreTransport`` to the sandbox store, in process: the same `verifyReceipt` request and response
/// bytes as over HTTP, without a loopback connection. Its two endpoints mirror Apple's production and sandbox URLs.
struct SandboxStoreTransport: StoreTransport {
    /// The URL standing for Apple's production endpoint.
    static let productionURL = URL(string: "kiosk-sandbox://production/verifyReceipt")!
    /// The URL standing for Apple's sandbox endpoint.
    static let sandboxURL = URL(string: "kiosk-sandbox://sandbox/verifyReceipt")!

    let store: SandboxStore

    func post(_ body: Data, to url: URL, timeout: Duration) async throws -> StoreHTTPResponse {
        let environment: StoreEnvironment = url.host == "production" ? .production : .sandbox
        let answer = try await store.verifyReceipt(body: body, environment: environment)
        return StoreHTTPResponse(status: 200, body: try JSONEncoder().encode(answer))
    }
}
