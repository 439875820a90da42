import Crypto
import Foundation
import KioskCore
import KioskServerTestSupport
import KioskStore
import NIOConcurrencyHelpers
import Testing

@testable import KioskServer

/// #31, the App Store Server API client: the bearer JWT (checked by a verifier of the test's own), its reuse, the
/// retry table (429 with `Retry-After` in milliseconds, the retryable codes, 5xx, 401), base URLs with path
/// prefixes, and Apple's error bodies from the fixtures.
@Suite("App Store Server API client")
struct AppStoreAPIClientTests {
    static let key = AppStoreAPIKey(
        privateKey: P256.Signing.PrivateKey(), keyID: "ABC123DEFG", issuerID: "57246542-96fe-1a63-e053-0824d011072a",
        bundleID: "com.example.kiosk")

    /// The header and claims of `token` once its ES256 signature checked against `publicKey`; nil when it does not.
    static func verify(_ token: String, with publicKey: P256.Signing.PublicKey) throws -> (
        header: [String: Any], claims: [String: Any]
    )? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let decode = { (part: Substring) in Base64URL.decode(part) }
        guard let header = decode(parts[0]), let claims = decode(parts[1]), let signature = decode(parts[2]),
            let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            publicKey.isValidSignature(ecdsa, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { return nil }
        return (
            try JSONSerialization.jsonObject(with: header) as? [String: Any] ?? [:],
            try JSONSerialization.jsonObject(with: claims) as? [String: Any] ?? [:]
        )
    }

    @Test func theTokenIsAnES256JWTWithApplesClaims() throws {
        let tokens = AppStoreAPITokens(key: Self.key)
        let now = Date(timeIntervalSince1970: 1_800_000_000.7)
        let token = try tokens.token(at: now)
        let (header, claims) = try #require(try Self.verify(token, with: Self.key.publicKey), "the signature")
        #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == "ABC123DEFG")
        #expect(header["typ"] as? String == "JWT" && header.count == 3)
        #expect(claims["iss"] as? String == "57246542-96fe-1a63-e053-0824d011072a")
        #expect(claims["aud"] as? String == "appstoreconnect-v1" && claims["bid"] as? String == "com.example.kiosk")
        let issuedAt = try #require(claims["iat"] as? Int)
        let expiresAt = try #require(claims["exp"] as? Int)
        #expect(issuedAt == 1_800_000_000 && expiresAt - issuedAt == 1800 && expiresAt - issuedAt <= 3600)
        #expect(claims.count == 5)
        // Another key does not verify it.
        #expect(try Self.verify(token, with: P256.Signing.PrivateKey().publicKey) == nil)
    }

    @Test func aTokenIsReusedUntilFiveMinutesBeforeItExpires() throws {
        let tokens = AppStoreAPITokens(key: Self.key)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let first = try tokens.token(at: start)
        #expect(try tokens.token(at: start.addingTimeInterval(60)) == first)
        #expect(try tokens.token(at: start.addingTimeInterval(25 * 60 - 1)) == first)
        #expect(tokens.signedCount == 1)
        let second = try tokens.token(at: start.addingTimeInterval(25 * 60))
        #expect(second != first && tokens.signedCount == 2)
        // A clock that went back before the token's issue gets a new one rather than one valid for too long.
        #expect(try tokens.token(at: start.addingTimeInterval(-3600)) != second)
    }

    @Test func aKeyIsReadFromAP8AndNeverShown() throws {
        let privateKey = P256.Signing.PrivateKey()
        let key = try AppStoreAPIKey(
            pem: privateKey.pemRepresentation, keyID: "KEY1234567", issuerID: "issuer", bundleID: "com.example")
        #expect(key.publicKey.rawRepresentation == privateKey.publicKey.rawRepresentation)
        let shown = "\(key) \(String(reflecting: key))"
        #expect(!shown.contains("PRIVATE") && shown.contains("KEY1234567"))
        #expect(throws: AppStoreAPIKey.Invalid.notAP256PrivateKey) {
            try AppStoreAPIKey(
                pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", keyID: "K",
                issuerID: "I", bundleID: "B")
        }
        #expect(throws: AppStoreAPIKey.Invalid.invalidIdentifier(field: "key ID")) {
            try AppStoreAPIKey(pem: privateKey.pemRepresentation, keyID: "", issuerID: "I", bundleID: "B")
        }
    }

    // MARK: - The retry table

    static func machine(attempts: Int = 4) -> AppStoreAPICallStateMachine {
        AppStoreAPICallStateMachine(
            configuration: .init(maxAttempts: attempts, backoff: ExponentialBackoff(), longestRetryAfter: .seconds(30)),
            jitter: .seeded(31))
    }

    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test(arguments: [200, 202, 204])
    func successes(status: Int) {
        var machine = Self.machine()
        #expect(
            machine.answered(status: status, errorCode: nil, retryAfterMilliseconds: nil, now: Self.now) == .succeed)
    }

    @Test(arguments: [(401, 4010000 as Int?), (301, nil), (307, nil)])
    func credentialsOrRedirectsAreAMisconfiguration(status: Int, code: Int?) {
        var machine = Self.machine()
        #expect(
            machine.answered(status: status, errorCode: code, retryAfterMilliseconds: nil, now: Self.now)
                == .fail(.misconfigured(status: status, errorCode: code)))
    }

    @Test(arguments: [(404, 4040010), (400, 4000006), (403, 4030001 as Int?), (404, nil)])
    func otherRefusalsAreFinal(status: Int, code: Int?) {
        var machine = Self.machine()
        #expect(
            machine.answered(
                status: status, errorCode: code, errorMessage: "m", retryAfterMilliseconds: nil, now: Self.now)
                == .fail(.refused(status: status, errorCode: code, message: "m")))
    }

    @Test(arguments: [(404, 4040002 as Int?), (404, 4040004), (404, 4040006), (500, 5000001), (500, nil), (503, nil)])
    func retryableCodesAnd5xxAreRetriedThenUnavailable(status: Int, code: Int?) {
        var machine = Self.machine(attempts: 3)
        var waits: [Duration] = []
        for _ in 0..<2 {
            guard
                case .retry(let wait) = machine.answered(
                    status: status, errorCode: code, retryAfterMilliseconds: nil, now: Self.now)
            else {
                Issue.record("not retried")
                return
            }
            waits.append(wait)
        }
        #expect(waits[0] >= .milliseconds(125) && waits[0] <= .milliseconds(250))
        #expect(waits[1] >= .milliseconds(250) && waits[1] <= .milliseconds(500))
        guard
            case .fail(.unavailable(let retryAfter)) = machine.answered(
                status: status, errorCode: code, retryAfterMilliseconds: nil, now: Self.now)
        else {
            Issue.record("not unavailable after the last attempt")
            return
        }
        #expect(retryAfter != nil)
    }

    @Test func a429WaitsUntilItsRetryAfterInMilliseconds() {
        var machine = Self.machine()
        // 2.5 s after now, as a UNIX time in milliseconds.
        let due = Int64(Self.now.timeIntervalSince1970 * 1000) + 2500
        #expect(
            machine.answered(status: 429, errorCode: 4_290_000, retryAfterMilliseconds: due, now: Self.now)
                == .retry(after: .milliseconds(2500)))
        // Read as seconds it would be 50 years away: beyond the longest wait, the call fails with that time.
        var other = Self.machine()
        let far = Int64(Self.now.timeIntervalSince1970 * 1000) + 60_000
        #expect(
            other.answered(status: 429, errorCode: 4_290_000, retryAfterMilliseconds: far, now: Self.now)
                == .fail(.unavailable(retryAfter: .seconds(60))))
        // A time already past waits the backoff.
        var past = Self.machine()
        guard
            case .retry(let wait) = past.answered(
                status: 429, errorCode: nil, retryAfterMilliseconds: due - 10_000, now: Self.now)
        else {
            Issue.record("not retried")
            return
        }
        #expect(wait >= .milliseconds(125) && wait <= .milliseconds(250))
    }

    @Test func transportFailuresAreRetried() {
        var machine = Self.machine(attempts: 2)
        guard case .retry = machine.failedToConnect() else {
            Issue.record("not retried")
            return
        }
        guard case .fail(.unavailable) = machine.failedToConnect() else {
            Issue.record("not unavailable")
            return
        }
    }

    // MARK: - The client over a scripted transport

    /// Answers requests from a script and keeps them.
    final class ScriptedTransport: AppStoreAPITransport {
        let script: NIOLockedValueBox<[Result<AppStoreAPIHTTPResponse, any Error>]>
        let requests = NIOLockedValueBox<[AppStoreAPIHTTPRequest]>([])

        init(_ script: [Result<AppStoreAPIHTTPResponse, any Error>]) { self.script = NIOLockedValueBox(script) }

        func send(_ request: AppStoreAPIHTTPRequest, timeout: Duration) async throws -> AppStoreAPIHTTPResponse {
            requests.withLockedValue { $0.append(request) }
            return try script.withLockedValue { $0.removeFirst() }.get()
        }
    }

    struct Unreachable: Error {}

    static func fixture(_ name: String) throws -> Data {
        try Data(
            contentsOf: AppleFixtures.folder.appendingPathComponent("app-store-server-library-swift/models/\(name)"))
    }

    @Test func aCallSignsEachAttemptPicksTheEnvironmentsBaseAndFollowsTheTable() async throws {
        let transport = ScriptedTransport([
            .failure(Unreachable()),
            .success(
                .init(
                    status: 429, headers: ["retry-after": "1800000001000"],
                    body: try Self.fixture("apiTooManyRequestsException.json"))),
            .success(.init(status: 500, body: try Self.fixture("apiUnknownError.json"))),
            .success(.init(status: 200, body: Data(#"{"signedTransactionInfo":"x"}"#.utf8))),
        ])
        let waits = NIOLockedValueBox<[Duration]>([])
        let client = AppStoreAPIClient(
            tokens: AppStoreAPITokens(key: Self.key),
            baseURLs: .init(
                production: URL(string: "https://api.example.com/apple/")!,
                sandbox: URL(string: "http://127.0.0.1:9/sandbox-api")!),
            transport: transport, retries: .init(maxAttempts: 4), now: { Self.now },
            sleep: { wait in waits.withLockedValue { $0.append(wait) } })
        let body = try await client.send("GET", path: "/inApps/v1/transactions/2000000000000001", environment: .sandbox)
        #expect(body == Data(#"{"signedTransactionInfo":"x"}"#.utf8))
        let requests = transport.requests.withLockedValue { $0 }
        #expect(requests.count == 4)
        #expect(
            requests.allSatisfy {
                $0.url.absoluteString == "http://127.0.0.1:9/sandbox-api/inApps/v1/transactions/2000000000000001"
            })
        for request in requests {
            let bearer = try #require(request.headers.first { $0.name == "Authorization" }?.value)
            #expect(bearer.hasPrefix("Bearer "))
            let verified = try Self.verify(String(bearer.dropFirst(7)), with: Self.key.publicKey)
            #expect(verified != nil)
        }
        let recorded = waits.withLockedValue { $0 }
        #expect(recorded.count == 3 && recorded[1] == .seconds(1), "\(recorded)")

        let production = try AppStoreAPIClient.url(
            base: URL(string: "https://api.example.com/apple/")!, path: "/inApps/v2/history/1",
            query: [URLQueryItem(name: "revision", value: "a+b/c")])
        #expect(production.absoluteString == "https://api.example.com/apple/inApps/v2/history/1?revision=a+b/c")
    }

    @Test func a401FailsAtOnceSayingWhatToFix() async throws {
        let transport = ScriptedTransport([.success(.init(status: 401))])
        let client = AppStoreAPIClient(
            tokens: AppStoreAPITokens(key: Self.key), baseURLs: .init(), transport: transport, now: { Self.now },
            sleep: { _ in Issue.record("slept") })
        await #expect(throws: AppStoreAPIFailure.misconfigured(status: 401, errorCode: nil)) {
            try await client.send("GET", path: "/inApps/v1/transactions/1", environment: .production)
        }
        #expect(transport.requests.withLockedValue { $0.map(\.url.host) } == ["api.storekit.itunes.apple.com"])
        #expect("\(AppStoreAPIFailure.misconfigured(status: 401, errorCode: nil))".contains("key ID, issuer ID"))
    }

    @Test(arguments: [
        ("apiException.json", 5_000_000), ("apiTooManyRequestsException.json", 4_290_000),
        ("transactionIdNotFoundError.json", 4_040_010), ("invalidTransactionIdError.json", 4_000_006),
    ])
    func applesErrorBodiesAreRead(file: String, code: Int) throws {
        #expect(AppStoreAPIErrorBody.decode(try Self.fixture(file))?.errorCode == code)
    }
}

/// What an App Store mode server says at start about its App Store Server API key: loaded (its IDs, never the key)
/// or absent (which variables to set).
@Suite("App Store Server API key at start")
struct AppStoreAPIKeyStartLogTests {
    static func start(with key: String?) async throws -> String {
        let (content, data) = (try ServerTestDirectory("api-log-content"), try ServerTestDirectory("api-log-data"))
        try content.writeProduct(id: "com.example.issue")
        var configuration = ServerConfiguration.forTests(content: content.url, data: data.url)
        configuration.store = .appstore
        configuration.bundleID = "com.acme.newsstand"
        if let key {
            configuration.appStoreKey = key
            configuration.appStoreKeyID = "KEY1234567"
            configuration.appStoreIssuerID = "57246542-96fe-1a63-e053-0824d011072a"
        }
        let log = LogRecorder()
        let server = try await LiveKioskServer.start(configuration: configuration, logger: log.logger)
        await server.stop()
        return DatabasePasswordLoggingTests.text(of: log)
    }

    @Test func aKeyIsAnnouncedByItsIDsAndItsAbsenceSaysWhatToSet() async throws {
        let pem = P256.Signing.PrivateKey().pemRepresentation
        let loaded = try await Self.start(with: pem)
        #expect(loaded.contains("App Store Server API on") && loaded.contains("KEY1234567"))
        let body = pem.split(separator: "\n").dropFirst().first.map(String.init) ?? pem
        #expect(!loaded.contains(body) && !loaded.contains("PRIVATE KEY"))
        let absent = try await Self.start(with: nil)
        #expect(absent.contains("no App Store Server API key") && absent.contains("KIOSK_APP_STORE_KEY_FILE"))
    }
}
