import Crypto
import Foundation
import KioskCore
import NIOConcurrencyHelpers

/// The bearer tokens of App Store Server API requests: ES256 JWTs signed with the ``AppStoreAPIKey``, each reused
/// until shortly before it expires.
///
/// A token's header is `{"alg":"ES256","kid":…,"typ":"JWT"}`; its claims `{"aud":"appstoreconnect-v1","bid":…,
/// "exp":…,"iat":…,"iss":…}`, `exp` ``lifetime`` after `iat` (Apple refuses more than 60 minutes). A new token is made
/// once the current one has less than ``renewalMargin`` left, so that a request never carries one that expires on
/// the way. Tokens are never logged.
public final class AppStoreAPITokens: Sendable {
    /// How long a token is valid: 30 minutes (Apple's limit is 60).
    public static let lifetime: TimeInterval = 30 * 60
    /// How long before its expiry a token is replaced: 5 minutes.
    public static let renewalMargin: TimeInterval = 5 * 60
    /// The audience Apple requires.
    static let audience = "appstoreconnect-v1"

    /// The key tokens are signed with.
    public let key: AppStoreAPIKey
    private let current = NIOLockedValueBox<(token: String, expiresAt: Date)?>(nil)
    private let signed = NIOLockedValueBox(0)

    /// Tokens signed with `key`.
    public init(key: AppStoreAPIKey) {
        self.key = key
    }

    /// A token valid at `now` for at least ``renewalMargin``: the current one, or a new one made at `now`.
    public func token(at now: Date) throws -> String {
        try current.withLockedValue { current in
            if let kept = current, kept.expiresAt.timeIntervalSince(now) > Self.renewalMargin,
                kept.expiresAt.timeIntervalSince(now) <= Self.lifetime
            {
                return kept.token
            }
            let issuedAt = Int64(now.timeIntervalSince1970.rounded(.down))
            let expiresAt = issuedAt + Int64(Self.lifetime)
            let token = try Self.sign(key: key, issuedAt: issuedAt, expiresAt: expiresAt)
            current = (token, Date(timeIntervalSince1970: TimeInterval(expiresAt)))
            signed.withLockedValue { $0 += 1 }
            return token
        }
    }

    /// How many tokens were signed so far (tests check that tokens are reused).
    public var signedCount: Int { signed.withLockedValue { $0 } }

    /// The compact JWS of `key`'s claims for a token issued at `issuedAt`, expiring at `expiresAt` (UNIX seconds).
    static func sign(key: AppStoreAPIKey, issuedAt: Int64, expiresAt: Int64) throws -> String {
        let header = try JSONSerialization.data(
            withJSONObject: ["alg": "ES256", "kid": key.keyID, "typ": "JWT"], options: [.sortedKeys])
        let claims = try JSONSerialization.data(
            withJSONObject: [
                "aud": audience, "bid": key.bundleID, "exp": expiresAt, "iat": issuedAt, "iss": key.issuerID,
            ] as [String: Any], options: [.sortedKeys, .withoutEscapingSlashes])
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(claims)
        // ES256 in a JWS is the raw `r ‖ s`, 64 bytes, not DER.
        let signature = try key.privateKey.signature(for: Data(signingInput.utf8)).rawRepresentation
        return signingInput + "." + Base64URL.encode(signature)
    }
}
