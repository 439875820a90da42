import Crypto
import Foundation
import KioskCore

/// How the sandbox store's App Store Server API checks a request's bearer token, as Apple documents the JWT: header
/// `alg` ES256, `kid` the key's ID, `typ` JWT; claims `iss` the issuer ID, `aud` `appstoreconnect-v1`, `bid` the
/// bundle ID, `iat` not in the future, `exp` after now and at most 60 minutes after `iat`; an ES256 signature by the
/// key.
struct SandboxAPITokenCheck: Sendable {
    /// The key whose tokens are accepted.
    let key: AppStoreAPIKey

    /// The most a token may live, by Apple's rule.
    static let longestLifetime: Int64 = 60 * 60
    /// How far a token's `iat` may be ahead of the clock.
    static let clockSkew: Int64 = 60

    private struct Header: Decodable {
        var alg: String?
        var kid: String?
        var typ: String?
    }

    private struct Claims: Decodable {
        var iss: String?
        var aud: String?
        var bid: String?
        var iat: Int64?
        var exp: Int64?
    }

    /// Whether `authorization` (the `Authorization` field) carries a token of ``key`` valid at `now`.
    func accepts(authorization: String?, now: Date) -> Bool {
        guard let authorization, authorization.hasPrefix("Bearer ") else { return false }
        let parts = authorization.dropFirst("Bearer ".count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]),
            let claimsData = Base64URL.decode(parts[1]), let signature = Base64URL.decode(parts[2]),
            let header = try? JSONDecoder().decode(Header.self, from: headerData),
            let claims = try? JSONDecoder().decode(Claims.self, from: claimsData)
        else { return false }
        guard header.alg == "ES256", header.kid == key.keyID, header.typ == "JWT", claims.iss == key.issuerID,
            claims.aud == AppStoreAPITokens.audience, claims.bid == key.bundleID,
            let issuedAt = claims.iat, let expiresAt = claims.exp
        else { return false }
        let seconds = Int64(now.timeIntervalSince1970)
        guard issuedAt <= seconds + Self.clockSkew, expiresAt > seconds, expiresAt > issuedAt,
            expiresAt - issuedAt <= Self.longestLifetime
        else { return false }
        guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return key.publicKey.isValidSignature(ecdsa, for: Data("\(parts[0]).\(parts[1])".utf8))
    }
}
