import Crypto
import Foundation
import KioskCore

/// Signs and checks grant tokens: `v1.<key id>.<base64url claims>.<base64url HMAC-SHA-256>`.
///
/// The MAC covers everything before it, so neither the claims nor the key ID can be changed; it is compared in
/// constant time.
public struct GrantSigner: Sendable {
    private let keyring: GrantKeyring

    /// Creates a signer over a keyring.
    public init(keyring: GrantKeyring) { self.keyring = keyring }

    /// A token for `claims`, signed with the current key.
    public func sign(_ claims: GrantClaims) -> String {
        let payload = Base64URL.encode(try! JSONEncoder().encode(claims))  // encoding plain strings and integers cannot fail
        let signed = "v1.\(keyring.currentKeyID).\(payload)"
        let mac = HMAC<SHA256>.authenticationCode(for: Data(signed.utf8), using: keyring.currentKey)
        return signed + "." + Base64URL.encode(Data(mac))
    }

    /// Checks a token's signature and expiry and returns its claims, or the reason it does not open anything.
    public func verify(_ token: String, now: Date) -> Result<GrantClaims, GrantTokenRefusal> {
        verifySignature(token).flatMap { claims in
            Int64(now.timeIntervalSince1970) < claims.expiresAt ? .success(claims) : .failure(.expired)
        }
    }

    /// Checks only a token's signature and returns its claims, expired or not (``GrantTokenRefusal/invalid``
    /// otherwise): for a report about a download the token opened, which may come after the token expired.
    public func verifySignature(_ token: String) -> Result<GrantClaims, GrantTokenRefusal> {
        guard token.utf8.count <= 2048 else { return .failure(.invalid) }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "v1", let key = keyring.key(for: String(parts[1])),
            let mac = Base64URL.decode(parts[3]), Base64URL.encode(mac) == parts[3],  // one spelling per token
            let payload = Base64URL.decode(parts[2])
        else { return .failure(.invalid) }
        let signed = parts[0...2].joined(separator: ".")
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Data(signed.utf8), using: key),
            let claims = try? JSONDecoder().decode(GrantClaims.self, from: payload)
        else { return .failure(.invalid) }
        return .success(claims)
    }
}
