import Foundation
import KioskCore
import KioskStore

/// Verified receipts by digest, each kept for a time-to-live, at most `capacity` of them (oldest evicted first).
///
/// A value type with no clock: callers pass `now`. The ``ReceiptVerifier`` actor owns one.
struct ReceiptCache: Sendable {
    private struct Entry: Sendable {
        var receipt: VerifiedReceipt
        var expiry: Date
        var sequence: UInt64
    }

    /// The most entries kept; `0` disables the cache.
    let capacity: Int
    /// How long an entry is served, in seconds; `0` or less disables the cache.
    let timeToLive: TimeInterval
    private var entries: [Data: Entry] = [:]
    private var nextSequence: UInt64 = 0
    /// Entries removed to make room.
    private(set) var evictions = 0

    /// Creates an empty cache.
    init(capacity: Int, timeToLive: Duration) {
        self.capacity = max(0, capacity)
        self.timeToLive = timeToLive.timeInterval
    }

    /// The number of entries, expired ones included until they are looked up or make room.
    var count: Int { entries.count }

    /// The receipt stored under `key` if it has not expired at `now`; an expired entry is removed.
    mutating func receipt(for key: Data, now: Date) -> VerifiedReceipt? {
        guard let entry = entries[key] else { return nil }
        guard now < entry.expiry else {
            entries[key] = nil
            return nil
        }
        return entry.receipt
    }

    /// Forgets every entry (after a refund, so the next verification asks the store again).
    mutating func removeAll() { entries.removeAll() }

    /// Stores `receipt` under `key` until `now + timeToLive`, evicting expired entries and then the oldest if full.
    mutating func insert(_ receipt: VerifiedReceipt, for key: Data, now: Date) {
        guard capacity > 0, timeToLive > 0 else { return }
        if entries[key] == nil, entries.count >= capacity {
            entries = entries.filter { now < $0.value.expiry }
            while entries.count >= capacity, let oldest = entries.min(by: { $0.value.sequence < $1.value.sequence }) {
                entries[oldest.key] = nil
                evictions += 1
            }
        }
        entries[key] = Entry(receipt: receipt, expiry: now.addingTimeInterval(timeToLive), sequence: nextSequence)
        nextSequence += 1
    }
}
