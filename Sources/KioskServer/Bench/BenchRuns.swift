import Crypto
import NIOConcurrencyHelpers

/// The runs of `kiosk bench`'s scenarios: for each run, scenario and file, how many requests came, so that the
/// next one gets the scenario's next step. A run is named by the request (`?run=NAME`) or, by default, by the
/// client's address and `User-Agent`, so that clients in parallel do not share a sequence.
///
/// Within a run, steps follow the order in which requests arrive; the random choices of a step (`cut=random`)
/// come from the server's seed, the run, the scenario, the file and the request's number, so the same seed gives
/// the same run to a client that sends one request at a time.
final class BenchRuns: Sendable {
    /// The seed every run's random choices derive from.
    let seed: UInt64
    private let counts = NIOLockedValueBox([Key: Int]())
    /// How many (run, scenario, file) sequences are remembered before the memory starts over (about 20 MB).
    static let limit = 100_000

    private struct Key: Hashable {
        var run: String
        var scenario: String
        var file: String
    }

    /// One request's place in its run.
    struct Request: Equatable {
        /// The run's name.
        var run: String
        /// Its number among the run's requests for this scenario and file, from 1.
        var number: Int
        /// The seed of its random choices.
        var seed: UInt64
    }

    init(seed: UInt64) {
        self.seed = seed
    }

    /// Counts a request of `run` for `file` under `scenario` and gives its number and seed.
    func next(run: String, scenario: String, file: String) -> Request {
        let key = Key(run: run, scenario: scenario, file: file)
        let number = counts.withLockedValue { counts in
            if counts.count >= Self.limit, counts[key] == nil { counts.removeAll() }
            counts[key, default: 0] += 1
            return counts[key]!
        }
        return Request(run: run, number: number, seed: requestSeed(key, number: number))
    }

    /// A seed from the server's seed and the request's place, the same in every process (unlike `Hasher`).
    private func requestSeed(_ key: Key, number: Int) -> UInt64 {
        var hasher = SHA256()
        withUnsafeBytes(of: seed.littleEndian) { hasher.update(bufferPointer: $0) }
        for part in [key.run, key.scenario, key.file, String(number)] {
            hasher.update(data: Array(part.utf8))
            hasher.update(data: [0])
        }
        return hasher.finalize().withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }
}
