import NIOConcurrencyHelpers

/// The subchunks of chunks already cut, by the chunk's SHA-256, so that a chunk is read and hashed once however
/// many clients update through it (and a token holder who asks again and again costs a lookup, not 4 MiB of reads).
///
/// A chunk's subchunks depend only on its bytes, so one entry serves the same chunk in any file or version. The
/// cache holds at most ``capacity`` chunks (about 1 KiB each: 8,192 take about 8 MiB) and forgets the oldest first.
/// Subchunks are held as ``FileChunk``s, a length and a SHA-256 each; their offsets follow from the chunk's.
final class SubchunkCache: Sendable {
    private struct State {
        var entries: [SHA256Digest: [FileChunk]] = [:]
        /// The keys in the order they were stored, as a ring: `order[next]` is the oldest once the ring is full.
        var order: [SHA256Digest] = []
        var next = 0
    }

    /// The most chunks held.
    let capacity: Int
    private let state = NIOLockedValueBox(State())

    /// A cache of at most `capacity` chunks (at least one).
    init(capacity: Int = 8192) {
        self.capacity = max(1, capacity)
    }

    /// The subchunks of the chunk whose SHA-256 is `digest`, if cut before.
    func subchunks(of digest: SHA256Digest) -> [FileChunk]? {
        state.withLockedValue { $0.entries[digest] }
    }

    /// Remembers the subchunks of the chunk whose SHA-256 is `digest`, forgetting the oldest chunk when full.
    func store(_ subchunks: [FileChunk], of digest: SHA256Digest) {
        state.withLockedValue { state in
            guard state.entries.updateValue(subchunks, forKey: digest) == nil else { return }
            if state.order.count < capacity {
                state.order.append(digest)
            } else {
                state.entries[state.order[state.next]] = nil
                state.order[state.next] = digest
                state.next = (state.next + 1) % capacity
            }
        }
    }

    /// The chunks held.
    var count: Int { state.withLockedValue { $0.entries.count } }
}
