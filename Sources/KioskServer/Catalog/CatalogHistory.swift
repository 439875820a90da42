/// What changed between the catalog snapshots this process has served, for the change feed: the tags of the last
/// snapshots and, between each two, the IDs added, changed and removed.
///
/// It lives in memory only, built at each reload by comparing each product's JSON with the previous snapshot's.
/// After a restart it knows only the current tag, so an older tag is unknown and the feed sends the whole catalog.
///
/// Bounds: the last ``maximumTags`` catalog tags, at most ``maximumRemovals`` removal records and at most
/// ``maximumRecords`` records of any kind. Older transitions are dropped first; their tags become unknown.
struct CatalogHistory: Sendable {
    /// The most catalog tags (snapshots) remembered, the current one included.
    static let maximumTags = 64
    /// The most removal records kept, all transitions together.
    static let maximumRemovals = 10_000
    /// The most records (added, changed and removed IDs) kept, all transitions together.
    static let maximumRecords = 100_000

    /// The IDs that changed from one snapshot to the next.
    struct Transition: Sendable {
        var added: [String]
        var changed: [String]
        var removed: [String]
        var recordCount: Int { added.count + changed.count + removed.count }
    }

    /// The opaque catalog tags, oldest first; the last is the current snapshot's.
    private(set) var tags: [String]
    /// `transitions[i]` leads from `tags[i]` to `tags[i + 1]`.
    private var transitions: [Transition] = []

    /// The history of a first snapshot: only its own tag.
    init(first catalog: EncodedCatalog) {
        tags = [catalog.tag]
    }

    /// This history followed by the change from `old` (its current snapshot) to `new`.
    func advanced(from old: EncodedCatalog, to new: EncodedCatalog) -> CatalogHistory {
        guard new.tag != old.tag else { return self }
        var transition = Transition(added: [], changed: [], removed: [])
        for (id, json) in new.productJSON {
            switch old.productJSON[id] {
            case nil: transition.added.append(id)
            case let previous? where previous != json: transition.changed.append(id)
            default: continue
            }
        }
        for id in old.productJSON.keys where new.productJSON[id] == nil { transition.removed.append(id) }
        var next = self
        next.tags.append(new.tag)
        next.transitions.append(transition)
        next.trim()
        return next
    }

    private mutating func trim() {
        var removals = transitions.reduce(0) { $0 + $1.removed.count }
        var records = transitions.reduce(0) { $0 + $1.recordCount }
        while !transitions.isEmpty
            && (tags.count > Self.maximumTags || removals > Self.maximumRemovals || records > Self.maximumRecords)
        {
            let dropped = transitions.removeFirst()
            tags.removeFirst()
            removals -= dropped.removed.count
            records -= dropped.recordCount
        }
    }

    /// The net change from the snapshot tagged `since` to the current one: IDs added, changed (present in both, with
    /// a change in between) and removed. Nil when the tag is not remembered.
    func changes(since tag: String) -> (added: Set<String>, changed: Set<String>, removed: Set<String>)? {
        guard let start = tags.lastIndex(of: tag) else { return nil }
        // For each ID touched after `start`, whether it existed at `start` (known from the first transition that
        // touches it) and whether it exists now (from the last one).
        var existedBefore: [String: Bool] = [:]
        var existsNow: [String: Bool] = [:]
        for transition in transitions[start...] {
            for id in transition.added {
                if existedBefore[id] == nil { existedBefore[id] = false }
                existsNow[id] = true
            }
            for id in transition.changed {
                if existedBefore[id] == nil { existedBefore[id] = true }
                existsNow[id] = true
            }
            for id in transition.removed {
                if existedBefore[id] == nil { existedBefore[id] = true }
                existsNow[id] = false
            }
        }
        var result: (added: Set<String>, changed: Set<String>, removed: Set<String>) = ([], [], [])
        for (id, before) in existedBefore {
            switch (before, existsNow[id] ?? false) {
            case (false, true): result.added.insert(id)
            case (true, true): result.changed.insert(id)
            case (true, false): result.removed.insert(id)
            case (false, false): continue
            }
        }
        return result
    }
}
