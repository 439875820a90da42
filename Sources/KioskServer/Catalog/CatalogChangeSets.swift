import NIOConcurrencyHelpers

/// The change sets of one snapshot's change feed, by `since` tag: what changed since that tag, computed from the
/// ``CatalogHistory`` on the first request and kept with the snapshot, so that every page of every walk from that
/// tag, whatever its `limit` or cursor, is a slice of it (``CatalogChangeSet``) and costs no more than a plain page.
///
/// Bounds: the history remembers at most ``CatalogHistory/maximumTags`` tags and only those have change sets, so a
/// snapshot holds at most that many and computes each once, however many distinct tags, limits and cursors are
/// sent (unknown tags get the whole catalog and no change set). Each holds at most the snapshot's products and
/// ``CatalogHistory/maximumRemovals`` removed IDs; all go with the snapshot. A set is computed under the lock, so
/// concurrent first requests for one tag compute it once.
final class CatalogChangeSets: Sendable {
    private let state = NIOLockedValueBox<(sets: [String: CatalogChangeSet], computations: Int)>(([:], 0))

    /// What changed since `tag` up to `catalog` (the snapshot these sets belong to), by `history`, the history of
    /// that snapshot; empty when the history does not remember `tag`.
    func changes(since tag: String, history: CatalogHistory, in catalog: EncodedCatalog) -> CatalogChangeSet {
        state.withLockedValue { state in
            if let known = state.sets[tag] { return known }
            let computed = CatalogChangeSet(history.changes(since: tag) ?? ([], [], []), in: catalog)
            state.computations += 1
            // Only remembered tags reach here; the bound holds even if one day they do not.
            if state.sets.count < CatalogHistory.maximumTags { state.sets[tag] = computed }
            return computed
        }
    }

    /// The change sets computed so far (what tests use to prove that pages do not compute them again).
    var computations: Int { state.withLockedValue { $0.computations } }
}
