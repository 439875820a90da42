import AsyncHTTPClient
import Foundation
import KioskCore
import KioskStore
import NIOCore
import NIOHTTP1

/// One request to the App Store Server API, as it goes on the wire.
public struct AppStoreAPIHTTPRequest: Sendable {
    /// `GET`, `POST` or `PUT`.
    public var method: String
    /// The whole URL.
    public var url: URL
    /// The header fields (the bearer token among them: never log them).
    public var headers: [(name: String, value: String)]
    /// The JSON body, if any.
    public var body: Data?
}

/// An answer of the App Store Server API.
public struct AppStoreAPIHTTPResponse: Sendable, Hashable {
    /// The HTTP status.
    public var status: Int
    /// The header fields, by lower-cased name.
    public var headers: [String: String]
    /// The body.
    public var body: Data

    /// An answer.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Sends App Store Server API requests: over AsyncHTTPClient to Apple, in process to the sandbox store, scripted in
/// tests. Follows no redirect; throws for a request that got no answer (connection failure, timeout).
public protocol AppStoreAPITransport: Sendable {
    /// Sends `request` and returns the answer, whatever its status.
    func send(_ request: AppStoreAPIHTTPRequest, timeout: Duration) async throws -> AppStoreAPIHTTPResponse
}

/// The App Store Server API over AsyncHTTPClient: the server's client that follows no redirect (the bearer token
/// never goes elsewhere), answers read up to 16 MiB.
struct HTTPAppStoreAPITransport: AppStoreAPITransport {
    /// The most of an answer that is read.
    static let maxResponseSize = 16 << 20

    func send(_ request: AppStoreAPIHTTPRequest, timeout: Duration) async throws -> AppStoreAPIHTTPResponse {
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await HTTPStoreTransport.noRedirectsClient.execute(outgoing, timeout: TimeAmount(timeout))
        let body = try await response.body.collect(upTo: Self.maxResponseSize)
        var headers: [String: String] = [:]
        for field in response.headers { headers[field.name.lowercased()] = field.value }
        return AppStoreAPIHTTPResponse(status: Int(response.status.code), headers: headers, body: Data(buffer: body))
    }
}

/// A client of the App Store Server API: it picks the base URL of the transaction's environment, signs each
/// request with a bearer JWT (``AppStoreAPITokens``), and retries by ``AppStoreAPICallStateMachine``'s rules.
public struct AppStoreAPIClient: Sendable {
    /// Where the API is, per environment; a base URL may carry a path prefix.
    public struct BaseURLs: Sendable, Hashable {
        /// Apple's production API.
        public static let production = URL(string: "https://api.storekit.itunes.apple.com")!
        /// Apple's sandbox API.
        public static let sandbox = URL(string: "https://api.storekit-sandbox.itunes.apple.com")!

        /// The production base URL (`--app-store-api-url`).
        public var production: URL
        /// The sandbox base URL (`--app-store-sandbox-api-url`).
        public var sandbox: URL

        /// Base URLs; Apple's by default.
        public init(production: URL = Self.production, sandbox: URL = Self.sandbox) {
            self.production = production
            self.sandbox = sandbox
        }

        /// The base URL of `environment`.
        func base(for environment: StoreEnvironment) -> URL {
            environment == .production ? production : sandbox
        }
    }

    /// How long one request may take.
    static let requestTimeout = Duration.seconds(30)

    /// Signs the requests.
    public let tokens: AppStoreAPITokens
    /// Where the API is.
    public let baseURLs: BaseURLs
    private let transport: any AppStoreAPITransport
    private let retries: AppStoreAPICallStateMachine.Configuration
    private let now: @Sendable () -> Date
    private let sleep: @Sendable (Duration) async throws -> Void

    /// A client signing with `tokens`, sending to `baseURLs` over `transport` (Apple's over HTTP by default).
    public init(tokens: AppStoreAPITokens, baseURLs: BaseURLs = BaseURLs()) {
        self.init(tokens: tokens, baseURLs: baseURLs, transport: HTTPAppStoreAPITransport())
    }

    /// A client with its transport, retry limits, clock and sleep given (tests).
    init(
        tokens: AppStoreAPITokens, baseURLs: BaseURLs, transport: any AppStoreAPITransport,
        retries: AppStoreAPICallStateMachine.Configuration = .init(), now: @escaping @Sendable () -> Date = Date.init,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.tokens = tokens
        self.baseURLs = baseURLs
        self.transport = transport
        self.retries = retries
        self.now = now
        self.sleep = sleep
    }

    /// Sends `method` to `path` (such as `/inApps/v1/transactions/123`, its segments already percent-encoded) with
    /// `query` and a JSON `body` in `environment`, and returns the body of the 2xx answer.
    /// - Throws: ``AppStoreAPIFailure``; `CancellationError` when the task is cancelled.
    public func send(
        _ method: String, path: String, query: [URLQueryItem] = [], body: Data? = nil,
        environment: StoreEnvironment
    ) async throws -> Data {
        let url = try Self.url(base: baseURLs.base(for: environment), path: path, query: query)
        var machine = AppStoreAPICallStateMachine(configuration: retries)
        while true {
            try Task.checkCancellation()
            var headers = [("Authorization", "Bearer \(try tokens.token(at: now()))"), ("Accept", "application/json")]
            if body != nil { headers.append(("Content-Type", "application/json")) }
            let request = AppStoreAPIHTTPRequest(method: method, url: url, headers: headers, body: body)
            let action: AppStoreAPICallStateMachine.Action
            let answer: AppStoreAPIHTTPResponse?
            do {
                answer = try await transport.send(request, timeout: Self.requestTimeout)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                answer = nil
            }
            if let answer {
                let error = (200..<300).contains(answer.status) ? nil : AppStoreAPIErrorBody.decode(answer.body)
                action = machine.answered(
                    status: answer.status, errorCode: error?.errorCode, errorMessage: error?.errorMessage,
                    retryAfterMilliseconds: answer.headers["retry-after"].flatMap { Int64($0) }, now: now())
            } else {
                action = machine.failedToConnect()
            }
            switch action {
            case .succeed: return answer?.body ?? Data()
            case .retry(let wait): try await sleep(wait)
            case .fail(let failure): throw failure
            }
        }
    }

    /// `base` with `path` after its own path and `query`.
    static func url(base: URL, path: String, query: [URLQueryItem]) throws -> URL {
        guard var components = URLComponents(url: base, resolvingAgainstBaseURL: false) else {
            throw AppStoreAPIFailure.misconfigured(status: 0, errorCode: nil)
        }
        var prefix = components.percentEncodedPath
        while prefix.hasSuffix("/") { prefix.removeLast() }
        components.percentEncodedPath = prefix + path
        components.queryItems = query.isEmpty ? nil : query
        guard let url = components.url else { throw AppStoreAPIFailure.misconfigured(status: 0, errorCode: nil) }
        return url
    }
}
