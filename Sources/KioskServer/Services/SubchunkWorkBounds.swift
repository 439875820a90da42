import NIOConcurrencyHelpers

/// How many chunks each download token, and each purchase, may have being cut into subchunks at once, all its
/// requests together: beyond either bound a request is refused (``SubchunkBusyRefusal``, 429 with `Retry-After`)
/// instead of queueing more reads and hashes behind the others.
///
/// A request is admitted with the chunks it lists that are not cut yet, and holds them until it is answered. A
/// chunk counts once per token and once per purchase however many of their requests wait for it: copies of a
/// request join the same cuts (``ChunkCutFlights``) and cost nothing more. One purchase can be granted many tokens,
/// so it has a bound of its own; the purchase is the grant's first transaction (``GrantClaims/originalTransactionID``,
/// or the transaction for tokens without it).
final class SubchunkWorkBounds: Sendable {
    /// The most chunks being cut for one token by default: two full requests (``SubchunkService/maximumChunks``).
    static let perToken = 128
    /// The most chunks being cut for one purchase by default, all its tokens together: four full requests.
    static let perPurchase = 256

    /// The chunks one request was admitted with, to give back with ``release(_:)``.
    struct Admission: Sendable {
        fileprivate let token: GrantClaims
        fileprivate let purchase: String
        fileprivate let chunks: Set<ChunkCutFlights.Key>
    }

    /// For each token and each purchase, the chunks admitted and not yet answered, each with the number of
    /// requests waiting for it.
    private struct State {
        var byToken: [GrantClaims: [ChunkCutFlights.Key: Int]] = [:]
        var byPurchase: [String: [ChunkCutFlights.Key: Int]] = [:]
    }

    /// The most chunks being cut for one token.
    let tokenLimit: Int
    /// The most chunks being cut for one purchase.
    let purchaseLimit: Int
    private let state = NIOLockedValueBox(State())

    /// Bounds of `tokenLimit` chunks per token and `purchaseLimit` per purchase.
    init(tokenLimit: Int = perToken, purchaseLimit: Int = perPurchase) {
        self.tokenLimit = tokenLimit
        self.purchaseLimit = purchaseLimit
    }

    /// Admits a request of the token with `claims` that needs `chunks` cut, or refuses it when they would take its
    /// token or its purchase over the bound.
    func admit(_ chunks: Set<ChunkCutFlights.Key>, for claims: GrantClaims) throws(SubchunkBusyRefusal)
        -> Admission
    {
        let admission = Admission(token: claims, purchase: Self.purchase(of: claims), chunks: chunks)
        let refusal = state.withLockedValue { state -> SubchunkBusyRefusal? in
            guard Self.count(afterAdding: chunks, to: state.byToken[claims]) <= tokenLimit else {
                return .token(limit: tokenLimit)
            }
            guard Self.count(afterAdding: chunks, to: state.byPurchase[admission.purchase]) <= purchaseLimit else {
                return .purchase(limit: purchaseLimit)
            }
            Self.add(chunks, to: &state.byToken[claims, default: [:]])
            Self.add(chunks, to: &state.byPurchase[admission.purchase, default: [:]])
            return nil
        }
        if let refusal { throw refusal }
        return admission
    }

    /// Gives back the chunks of an answered (or failed) request.
    func release(_ admission: Admission) {
        state.withLockedValue { state in
            Self.remove(admission.chunks, from: &state.byToken[admission.token])
            Self.remove(admission.chunks, from: &state.byPurchase[admission.purchase])
        }
    }

    /// The chunks being cut now for the token with `claims`, and for its purchase.
    func inFlight(for claims: GrantClaims) -> (token: Int, purchase: Int) {
        state.withLockedValue { state in
            (state.byToken[claims]?.count ?? 0, state.byPurchase[Self.purchase(of: claims)]?.count ?? 0)
        }
    }

    /// The purchase a token belongs to: its first transaction.
    private static func purchase(of claims: GrantClaims) -> String {
        claims.originalTransactionID ?? claims.transactionID
    }

    private static func count(afterAdding chunks: Set<ChunkCutFlights.Key>, to held: [ChunkCutFlights.Key: Int]?)
        -> Int
    {
        (held?.count ?? 0) + chunks.count(where: { held?[$0] == nil })
    }

    private static func add(_ chunks: Set<ChunkCutFlights.Key>, to held: inout [ChunkCutFlights.Key: Int]) {
        for chunk in chunks { held[chunk, default: 0] += 1 }
    }

    /// Removes one wait on each of `chunks`, and the holder when nothing is left.
    private static func remove(_ chunks: Set<ChunkCutFlights.Key>, from held: inout [ChunkCutFlights.Key: Int]?) {
        for chunk in chunks {
            if let waits = held?[chunk], waits > 1 { held?[chunk] = waits - 1 } else { held?[chunk] = nil }
        }
        if held?.isEmpty == true { held = nil }
    }
}
