/// The queue's scheduling rule, without I/O: at most `maximumConcurrent` downloads run; waiting ones start by
/// priority (highest first), first-in first-out within a priority.
struct DownloadQueue: Sendable, Hashable {
    /// One queued download as the scheduler sees it.
    struct Entry: Sendable, Hashable {
        /// The download.
        var id: DownloadID
        /// Its priority.
        var priority: DownloadPriority
        /// Its enqueue order (lower came first).
        var sequence: UInt64

        /// Creates an entry.
        init(id: DownloadID, priority: DownloadPriority, sequence: UInt64) {
            self.id = id
            self.priority = priority
            self.sequence = sequence
        }
    }

    /// How many downloads may be active at once (at least 1).
    var maximumConcurrent: Int

    /// Creates a queue rule.
    init(maximumConcurrent: Int = 2) { self.maximumConcurrent = max(1, maximumConcurrent) }

    /// The waiting downloads in the order they should start.
    func order(_ waiting: [Entry]) -> [Entry] {
        waiting.sorted { lhs, rhs in
            lhs.priority != rhs.priority ? lhs.priority > rhs.priority : lhs.sequence < rhs.sequence
        }
    }

    /// Which waiting downloads to start now, given how many are active.
    func toStart(waiting: [Entry], activeCount: Int) -> [DownloadID] {
        let free = max(0, maximumConcurrent - activeCount)
        return order(waiting).prefix(free).map(\.id)
    }
}
