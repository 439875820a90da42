import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The JSON half of the wire contract: catalog, receipt verification, grants. Errors come back typed, decoded
/// from the server's error envelope. Receipts and tokens are sent, never logged, and never to another origin: no
/// request follows a redirect (``URLSessionTaskRouter``).
///
/// Every answer is bounded: at most ``Limits/maximumResponseSize`` bytes, counted as the decoded bytes arrive
/// (URLSession inflates `gzip` on its own, so the wire size says nothing), and at most ``Limits/deadline`` seconds
/// from the request to the last byte, so a body that drips for ever also ends.
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

    /// The bounds of every JSON exchange and of every grant.
    struct Limits: Sendable {
        /// The largest answer body, in decoded bytes.
        var maximumResponseSize: Int
        /// The longest a request may take, start to last byte, in seconds.
        var deadline: TimeInterval
        /// What a grant may list.
        var grant: GrantLimits
    }

    let serverURL: URL
    let session: URLSession
    let limits: Limits
    /// This installation's ID, sent with grant requests (the server caps installations per purchase).
    let installationID: String?
    private let router: URLSessionTaskRouter
    /// Set by ``invalidate()``: no request starts after it (a task on an invalidated session traps).
    private let isInvalidated = Locked(false)

    /// A client of `serverURL` with its own session, made from the app's `sessionConfiguration` when given (see
    /// ``URLSessionConfiguration/kiosk(base:timeout:)``); `idleTimeout` is URLSession's per-request idle timeout
    /// when there is none.
    init(
        serverURL: URL, idleTimeout: TimeInterval, limits: Limits, installationID: String? = nil,
        sessionConfiguration: URLSessionConfiguration? = nil
    ) {
        let configuration = URLSessionConfiguration.kiosk(base: sessionConfiguration, timeout: idleTimeout)
        let router = URLSessionTaskRouter()
        let queue = BoundedOperationQueue(limit: 16)
        queue.name = "KioskKit.APIClient"
        self.serverURL = serverURL
        self.session = URLSession(configuration: configuration, delegate: router, delegateQueue: queue)
        self.router = router
        self.limits = limits
        self.installationID = installationID
    }

    /// Cancels every request and refuses new ones with ``KioskError/clientClosed``.
    func invalidate() {
        isInvalidated.withLock { $0 = true }
        session.invalidateAndCancel()
    }

    /// The server URL with `path` (already percent-encoded) appended to its own path.
    func url(_ path: String, query: [URLQueryItem] = []) throws(KioskError) -> URL {
        // URLComponents traps on a path that is not properly percent-encoded: check it first.
        guard path.hasPrefix("/"),
            path.utf8.split(separator: UInt8(ascii: "/")).allSatisfy({
                GrantValidation.percentDecoded(Substring($0)) != nil
            }),
            var components = URLComponents(url: serverURL, resolvingAgainstBaseURL: false)
        else { throw .invalidArgument("'\(serverURL.absoluteString)' with '\(path)' is not a usable URL.") }
        let base = components.percentEncodedPath
        components.percentEncodedPath = (base.hasSuffix("/") ? String(base.dropLast()) : base) + path
        components.queryItems = query.isEmpty ? nil : query
        components.fragment = nil
        guard let url = components.url else {
            throw .invalidArgument("'\(serverURL.absoluteString)' with '\(path)' is not a usable URL.")
        }
        return url
    }

    /// The URL of one file of a grant, after checking that the server's `url` is a path under the grant's product
    /// and version (see ``GrantValidation/contentPath(of:in:)``).
    func contentURL(for file: GrantFile, in grant: Grant) throws(KioskError) -> URL {
        try url(GrantValidation.contentPath(of: file, in: grant))
    }

    /// Sends a request and returns the answer (any status), its body at most ``Limits/maximumResponseSize`` decoded
    /// bytes, within ``Limits/deadline``. Network failures and the deadline become ``KioskError/network``, a larger
    /// body ``KioskError/responseTooLarge(limit:)``. Cancelling the calling task cancels the request at once
    /// (``KioskError/network`` with `URLError.cancelled`).
    func send(_ request: URLRequest) async throws(KioskError) -> Response {
        let session = self.session
        guard let task = isInvalidated.withLock({ $0 ? nil : session.dataTask(with: request) }) else {
            throw .clientClosed
        }
        let pending = PendingResponse(limit: limits.maximumResponseSize, deadline: limits.deadline)
        let router = self.router
        let result: Result<(Data, URLResponse), KioskError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                pending.start(task, continuation: continuation) {
                    router.register(pending, for: task.taskIdentifier)
                }
            }
        } onCancel: {
            pending.cancel(task)
        }
        let (data, response) = try result.get()
        guard let http = response as? HTTPURLResponse else { throw .invalidResponse("not an HTTP response") }
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            if let key = key as? String, let value = value as? String { headers[key] = value }
        }
        return Response(status: http.statusCode, headers: headers, body: data)
    }

    /// Whether the server answers at all, for a download waiting for the network: `GET /healthz`, within 10 s (or
    /// the session's request timeout when shorter). Any HTTP answer counts, a 503 too: the network reaches the server.
    func isReachable() async -> Bool {
        guard var request = try? URLRequest(url: url("/healthz")) else { return false }
        request.timeoutInterval = min(request.timeoutInterval, session.configuration.timeoutIntervalForRequest, 10)
        return (try? await send(request)) != nil
    }

    /// Sends a JSON request and decodes a 2xx JSON answer as `T` (with `decode`, by default `KioskJSON`'s decoder);
    /// any other status becomes a server error.
    func json<T: Decodable>(
        _ type: T.Type, method: String, path: String, query: [URLQueryItem] = [],
        body: (some Encodable)? = Optional<String>.none,
        headers: [String: String] = [:],
        decode: (Data) throws -> T = { try KioskJSON.decode(T.self, from: $0) }
    ) async throws(KioskError) -> (T?, Response) {
        var request = URLRequest(url: try url(path, query: query))
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
            throw KioskError.fromResponse(
                status: response.status, body: response.body,
                retryAfter: RetryAfter.seconds(from: response.header("Retry-After")))
        }
        do {
            return (try decode(response.body), response)
        } catch {
            throw .invalidResponse("the \(path) answer could not be decoded: \(error)")
        }
    }

    /// `POST /v1/downloads`: a grant for one product, decoded a few files at a time (``GrantJSON``) and checked
    /// (``GrantValidation``) before anything uses it.
    func grant(productID: String, proof: PurchaseProof) async throws(KioskError) -> Grant {
        let (grant, _) = try await json(
            Grant.self, method: "POST", path: "/v1/downloads",
            body: GrantRequest(
                proof: proof, productID: productID,
                installationID: installationID),
            decode: GrantJSON.decode)
        guard let grant else { throw .invalidResponse("empty grant") }
        try GrantValidation.validate(grant, productID: productID, limits: limits.grant)
        return grant
    }

    /// `POST /v1/receipts/verify`.
    func verify(proof: PurchaseProof) async throws(KioskError) -> EntitlementsResponse {
        let (answer, _) = try await json(
            EntitlementsResponse.self, method: "POST", path: "/v1/receipts/verify",
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
