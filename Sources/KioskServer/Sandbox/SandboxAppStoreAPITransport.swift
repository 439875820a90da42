import Foundation
import KioskStore

/// The App Store Server API client's transport for a sandbox-mode server: requests to ``productionURL`` and
/// ``sandboxURL`` go to the sandbox store's API in process (the same bytes as over HTTP, without a loopback
/// connection); any other URL (one given by `--app-store-api-url` or `--app-store-sandbox-api-url`) goes over HTTP.
struct SandboxAppStoreAPITransport: AppStoreAPITransport {
    /// The base URL standing for Apple's production API: it knows none of the sandbox's transactions.
    static let productionURL = URL(string: "kiosk-sandbox://production")!
    /// The base URL standing for Apple's sandbox API.
    static let sandboxURL = URL(string: "kiosk-sandbox://sandbox")!

    let api: SandboxAppStoreAPI
    let http: any AppStoreAPITransport

    func send(_ request: AppStoreAPIHTTPRequest, timeout: Duration) async throws -> AppStoreAPIHTTPResponse {
        guard request.url.scheme == Self.sandboxURL.scheme,
            let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        else { return try await http.send(request, timeout: timeout) }
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] { query[item.name] = item.value ?? "" }
        return await api.answer(
            SandboxAppStoreAPI.Request(
                method: request.method, path: components.path, query: query,
                authorization: request.headers.first { $0.name.lowercased() == "authorization" }?.value,
                body: request.body ?? Data(),
                environment: components.host == Self.productionURL.host ? .production : .sandbox))
    }
}
