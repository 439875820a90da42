import Foundation
import NIOConcurrencyHelpers

/// Grant tokens whose signature has been checked, remembered so that the many range requests of one download pay
/// the HMAC and the JSON decoding once (together about half of a short range request's CPU).
///
/// A token is the same bytes every time (``GrantSigner`` accepts one spelling per token), so a remembered token is
/// exactly a verified one; its expiry is still checked on every use, and refusals are never remembered. Bounded:
/// a full cache starts over.
final class VerifiedTokenCache: Sendable {
    private let signer: GrantSigner
    private let capacity: Int
    private let verified = NIOLockedValueBox<[String: GrantClaims]>([:])

    /// Remembers up to `capacity` verified tokens of `signer`.
    init(signer: GrantSigner, capacity: Int = 4096) {
        self.signer = signer
        self.capacity = capacity
    }

    /// The same answer as ``GrantSigner/verify(_:now:)``, from memory when the token was verified before.
    func verify(_ token: String, now: Date) -> Result<GrantClaims, GrantTokenRefusal> {
        if let claims = verified.withLockedValue({ $0[token] }), Int64(now.timeIntervalSince1970) < claims.expiresAt {
            return .success(claims)
        }
        let result = signer.verify(token, now: now)
        if case .success(let claims) = result {
            verified.withLockedValue { entries in
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
                entries[token] = claims
            }
        }
        return result
    }

    /// How many verified tokens are remembered.
    var count: Int { verified.withLockedValue { $0.count } }
}
