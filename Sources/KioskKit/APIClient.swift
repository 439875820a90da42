import Foundation
import KioskCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The JSON half of the wire contract: catalog, receipt verification, grants. Errors come back typed, decoded
/// from the server's error envelope. Receipts and tokens are sent, never logged.
struct APIClient: Sendable {
    /// A response's status, headers and body.
    struct Response: Sendable {
        var status: Int
        var headers: [String: String]
        var body: Data

        func header(_ name: String) -> String? {
            let lower = name.lowercased()
            return headers.first { $0.key.lowercased() == lower }?.value
        }
    }

    let serverURL: URL
    let session: URLSession
    /// This installation's ID, sent with grant requests (the server caps installations per purchase).
    let installationID: String?
    let maximumBodySize = 16 << 20

    init(serverURL: URL, session: URLSession, installationID: String? = nil) {
        self.serverURL = serverURL
        self.session = session
        self.installationID = installationID
    }

    static func makeSession(timeout: TimeInterval) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpCookieStorage = nil
        return URLSession(configuration: configuration)
    }

    func url(_ path: String, query: [URLQueryItem] = []) -> URL {
        var components = URLComponents(url: serverURL, resolvingAgainstBaseURL: false)!
        let base = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
        components.path = base + path
        components.queryItems = query.isEmpty ? nil : query
        return components.url!
    }

    /// Sends a request and returns the raw answer (any status). Network failures become ``KioskError/network``.
    func send(_ request: URLRequest) async throws(KioskError) -> Response {
        let session = self.session
        let result: Result<(Data, URLResponse), any Error> = await withCheckedContinuation { continuation in
            let task = session.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(returning: .failure(error))
                } else if let response {
                    continuation.resume(returning: .success((data ?? Data(), response)))
                } else {
                    continuation.resume(returning: .failure(URLError(.badServerResponse)))
                }
            }
            task.resume()
        }
        switch result {
        case .failure(let error):
            throw Self.networkError(error)
        case .success(let (data, response)):
            guard let http = response as? HTTPURLResponse else { throw .invalidResponse("not an HTTP response") }
            var headers: [String: String] = [:]
            for (key, value) in http.allHeaderFields {
                if let key = key as? String, let value = value as? String { headers[key] = value }
            }
            return Response(status: http.statusCode, headers: headers, body: data)
        }
    }

    /// Sends a JSON request and decodes a 2xx JSON answer as `T`; any other status becomes a server error.
    func json<T: Decodable>(_ type: T.Type, method: String, path: String, query: [URLQueryItem] = [],
                            body: (some Encodable)? = Optional<String>.none,
                            headers: [String: String] = [:]) async throws(KioskError) -> (T?, Response) {
        var request = URLRequest(url: url(path, query: query))
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body {
            do { request.httpBody = try KioskJSON.encode(body) } catch { throw .invalidArgument("\(error)") }
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let response = try await send(request)
        if response.status == 304 { return (nil, response) }
        guard (200...299).contains(response.status) else {
            throw KioskError.fromResponse(status: response.status, body: response.body,
                                          retryAfter: RetryAfter.seconds(from: response.header("Retry-After")))
        }
        do {
            return (try KioskJSON.decode(T.self, from: response.body), response)
        } catch {
            throw .invalidResponse("the \(path) answer could not be decoded: \(error)")
        }
    }

    /// `POST /v1/downloads`: a grant for one product.
    func grant(productID: String, proof: PurchaseProof) async throws(KioskError) -> Grant {
        let (grant, _) = try await json(Grant.self, method: "POST", path: "/v1/downloads",
                                        body: GrantRequest(proof: proof, productID: productID,
                                                           installationID: installationID))
        guard let grant else { throw .invalidResponse("empty grant") }
        guard grant.productID == productID, Identifiers.isValidContentVersion(grant.contentVersion),
              grant.files.allSatisfy({ Identifiers.isValidFilePath($0.path) && $0.length >= 0 && $0.sha256.count == 64 })
        else { throw .invalidResponse("the grant lists an unsafe path, version or hash") }
        return grant
    }

    /// `POST /v1/receipts/verify`.
    func verify(proof: PurchaseProof) async throws(KioskError) -> EntitlementsResponse {
        let (answer, _) = try await json(EntitlementsResponse.self, method: "POST", path: "/v1/receipts/verify",
                                         body: ReceiptVerificationRequest(proof: proof))
        guard let answer else { throw .invalidResponse("empty verification answer") }
        return answer
    }

    static func networkError(_ error: any Error) -> KioskError {
        if let error = error as? KioskError { return error }
        if let urlError = error as? URLError {
            return .network(code: urlError.errorCode, underlying: urlError.localizedDescription)
        }
        let nsError = error as NSError
        return .network(code: nsError.code, underlying: nsError.localizedDescription)
    }
}
