import Logging

/// Keeps this instance's ``RevocationList`` in step with the revocations every instance sharing the database
/// records: it replays the ledger's revocation events after the last it applied
/// (``Ledger/revocationEvents(after:limit:)``), each time it is woken (``RevocationFeed``).
///
/// Replaying is idempotent: an event carries the revocation in force when it is read, not the change it records, so
/// events read twice, or a change this process already applied, leave the list as the ledger is.
actor RevocationFollower {
    /// How many events one read takes; a catch-up reads until fewer come.
    static let batchSize = 500

    private let ledger: any Ledger
    private let list: RevocationList
    private let logger: Logger
    /// The last event applied.
    private(set) var lastEvent: Int64
    /// Whether the last catch-up failed (a failure is logged once, and its end once).
    private var failing = false

    /// Follows the events after `lastEvent` into `list`; `list` was loaded from `ledger` after `lastEvent` was read.
    init(ledger: any Ledger, list: RevocationList, after lastEvent: Int64, logger: Logger) {
        self.ledger = ledger
        self.list = list
        self.lastEvent = lastEvent
        self.logger = logger
    }

    /// Reads the list's events and the revocations `ledger` has in force, consistently: the event number first, then
    /// the revocations, so that no change falls between them (one made in between is replayed, harmlessly).
    static func start(ledger: any Ledger, logger: Logger) async throws -> (RevocationList, RevocationFollower) {
        let lastEvent = try await ledger.latestRevocationEvent()
        let list = try await RevocationList.load(from: ledger)
        return (list, RevocationFollower(ledger: ledger, list: list, after: lastEvent, logger: logger))
    }

    /// Applies every event recorded since the last one applied, and, when events after it were pruned meanwhile (an
    /// instance cut off from the database for longer than they are kept), loads the revocations afresh. The pruning
    /// is checked after the events are read: a prune committed between the two is seen. A database error is logged
    /// (once until it passes) and left for the next wake-up, which reads from the same place.
    func catchUp() async {
        do {
            let start = lastEvent
            var applied = 0
            while true {
                let events = try await ledger.revocationEvents(after: lastEvent, limit: Self.batchSize)
                guard let last = events.last else { break }
                list.apply(events)
                lastEvent = last.number
                applied += events.count
                if events.count < Self.batchSize { break }
            }
            if try await ledger.revocationEventsPrunedThrough() > start {
                let latest = try await ledger.latestRevocationEvent()
                list.replaceAll(with: try await ledger.revocations())
                logger.notice(
                    "revocation events this instance had not seen were pruned; loaded the revocations afresh",
                    metadata: ["last_seen": "\(start)", "now_at": "\(latest)"])
                lastEvent = max(lastEvent, latest)
            }
            if failing {
                failing = false
                logger.notice("revocations followed again", metadata: ["events_applied": "\(applied)"])
            }
        } catch {
            if !failing {
                failing = true
                logger.warning(
                    "cannot read the revocations other instances recorded; retrying",
                    metadata: ["reason": "\(KioskDatabaseError.reason(error))"])
            }
        }
    }
}
