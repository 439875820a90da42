import NIOConcurrencyHelpers

/// The chunks being cut now, each by one task that every request for it awaits (single flight): concurrent requests
/// for the same chunk read and hash it once, however many ask.
///
/// A cut that succeeds is stored in the ``SubchunkCache`` before it leaves the table, and the table is searched
/// before the cache under one lock, so a request finds a chunk in flight or cut, never in neither while it is
/// being cut. A cut that fails (the file changed on disk) is not stored: every request waiting for it gets the
/// error, and the next one cuts again. A cut goes on when the requests waiting for it go away; its result is cached.
final class ChunkCutFlights: Sendable {
    /// One chunk of one file on disk: the file, where the chunk starts in it, and the digest its bytes must have.
    /// The same bytes in two files are cut apart (one of them may be changing on disk) into one cache entry.
    struct Key: Hashable, Sendable {
        /// The file's absolute path.
        var path: String
        /// Where the chunk starts in the file.
        var offset: Int64
        /// The SHA-256 the catalog computed for the chunk.
        var digest: SHA256Digest
    }

    /// Where the subchunks of a chunk come from: the cache, or a cut that is running.
    private enum Source {
        case cached([FileChunk])
        case flight(Task<[FileChunk], any Error>)
    }

    private let flights = NIOLockedValueBox<[Key: Task<[FileChunk], any Error>]>([:])

    /// The subchunks of chunk `key`: from `cache`, from the cut of it in flight, or from `cut`, run in a new task
    /// that stores its result in `cache`.
    func subchunks(
        of key: Key, cache: SubchunkCache, cut: @escaping @Sendable () async throws -> [FileChunk]
    ) async throws -> [FileChunk] {
        let source = flights.withLockedValue { flights -> Source in
            if let running = flights[key] { return .flight(running) }
            if let cached = cache.subchunks(of: key.digest) { return .cached(cached) }
            // The task takes the lock to leave the table, so it leaves after it is put there.
            let started = Task {
                defer { self.flights.withLockedValue { $0[key] = nil } }
                let subchunks = try await cut()
                cache.store(subchunks, of: key.digest)
                return subchunks
            }
            flights[key] = started
            return .flight(started)
        }
        switch source {
        case .cached(let subchunks): return subchunks
        case .flight(let task): return try await task.value
        }
    }

    /// The chunks being cut now.
    var count: Int { flights.withLockedValue { $0.count } }
}
