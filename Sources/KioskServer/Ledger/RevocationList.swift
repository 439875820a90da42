import NIOConcurrencyHelpers

/// The refunded and revoked transactions and purchases, in memory, so that every content request can check its
/// token without a database query. Loaded from the ledger at start (which also applies the current scope rules to
/// revocations recorded by an older release) and kept in step with it by whoever commits a ``RevocationChange`` in
/// this process, and by a ``RevocationFollower`` for the changes every instance sharing the database commits.
public final class RevocationList: Sendable {
    private struct State {
        /// Every cancelled transaction, with its revocation: its own tokens no longer open content.
        var transactions: [String: Revocation] = [:]
        /// Purchases ended as a whole (original transaction ID → the cancelled transactions that end it).
        var purchases: [String: Set<String>] = [:]
    }

    private let state: NIOLockedValueBox<State>

    /// Creates a list holding `revocations`.
    public init(_ revocations: some Sequence<Revocation> = []) {
        var state = State()
        for revocation in revocations { Self.insert(revocation, into: &state) }
        self.state = NIOLockedValueBox(state)
    }

    /// Loads every revocation in force in `ledger`.
    public static func load(from ledger: any Ledger) async throws -> RevocationList {
        RevocationList(try await ledger.revocations())
    }

    /// Applies changes the ledger committed, in order.
    public func apply(_ changes: [RevocationChange]) {
        state.withLockedValue { state in
            for change in changes {
                switch change {
                case .revoked(let revocation): Self.insert(revocation, into: &state)
                case .reinstated(let revocation): Self.remove(revocation, from: &state)
                }
            }
        }
    }

    /// Replaces everything the list holds with `revocations`, at once.
    public func replaceAll(with revocations: some Sequence<Revocation>) {
        var fresh = State()
        for revocation in revocations { Self.insert(revocation, into: &fresh) }
        state.withLockedValue { $0 = fresh }
    }

    /// Sets each event's transaction to the revocation the event carries (none: lifted), in order.
    public func apply(_ events: [RevocationEvent]) {
        state.withLockedValue { state in
            for event in events {
                if let current = state.transactions[event.transactionID] { Self.remove(current, from: &state) }
                if let revocation = event.revocation { Self.insert(revocation, into: &state) }
            }
        }
    }

    /// Whether a token paid by `transactionID` (of the purchase `originalTransactionID`, when the token names it)
    /// must be refused: its transaction was cancelled, or its whole purchase was.
    public func refuses(transactionID: String, originalTransactionID: String?) -> Bool {
        state.withLockedValue { state in
            state.transactions[transactionID] != nil
                || originalTransactionID.map { state.purchases[$0] != nil } == true
        }
    }

    /// Whether the transaction itself was refunded or revoked.
    public func contains(_ transactionID: String) -> Bool {
        state.withLockedValue { $0.transactions[transactionID] != nil }
    }

    private static func insert(_ revocation: Revocation, into state: inout State) {
        // A revocation once scoped to the purchase stays so (the ledger widens a scope, never narrows it).
        if state.transactions[revocation.transactionID]?.scope != .purchase {
            state.transactions[revocation.transactionID] = revocation
        }
        if revocation.scope == .purchase {
            state.purchases[revocation.originalTransactionID, default: []].insert(revocation.transactionID)
        }
    }

    private static func remove(_ revocation: Revocation, from state: inout State) {
        state.transactions[revocation.transactionID] = nil
        state.purchases[revocation.originalTransactionID]?.remove(revocation.transactionID)
        if state.purchases[revocation.originalTransactionID]?.isEmpty == true {
            state.purchases[revocation.originalTransactionID] = nil
        }
    }
}
