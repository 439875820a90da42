import Crypto
import NIOConcurrencyHelpers

/// The runs of `kiosk bench`'s scenarios: for each run, scenario and file (a ``BenchSequence``), how many requests
/// came, so that the next one gets the scenario's next step, what each of them got, and what the client says it
/// ended with. A run is named by the request (`?run=NAME`) or, by default, by the client's address and
/// `User-Agent`, so that clients in parallel do not share a sequence.
///
/// Within a run, steps follow the order in which requests arrive; the random choices of a step (`cut=random`)
/// come from the server's seed, the run, the scenario, the file and the request's number, so the same seed gives
/// the same run to a client that sends one request at a time.
final class BenchRuns: Sendable {
    /// The seed every run's random choices derive from.
    let seed: UInt64
    private let sequences = NIOLockedValueBox([BenchSequence.Key: BenchSequence]())
    /// How many sequences are remembered before the memory starts over.
    static let limit = 10_000
    /// How many requests of one sequence are recorded (the first ones): a client looping for ever is cut short.
    static let recordsPerSequence = 256

    /// One request's place in its run.
    struct Request: Equatable {
        /// Its sequence.
        var key: BenchSequence.Key
        /// Its number among the sequence's requests, from 1.
        var number: Int
        /// The seed of its random choices.
        var seed: UInt64
    }

    init(seed: UInt64) {
        self.seed = seed
    }

    /// Counts a request of `run` for `file` under `scenario` and gives its number and seed.
    func next(run: String, scenario: String, file: String) -> Request {
        let key = BenchSequence.Key(run: run, scenario: scenario, file: file)
        let number = sequences.withLockedValue { sequences in
            if sequences.count >= Self.limit, sequences[key] == nil { sequences.removeAll() }
            sequences[key, default: BenchSequence()].requestCount += 1
            return sequences[key]!.requestCount
        }
        return Request(key: key, number: number, seed: requestSeed(key, number: number))
    }

    /// Whether `query` was answered as expired (`expire`) in `key`'s sequence: a URL that expired stays expired,
    /// and only a renewed one (another query) works.
    func hasExpired(_ query: String, in key: BenchSequence.Key) -> Bool {
        sequences.withLockedValue { $0[key]?.expiredQueries.contains(query) ?? false }
    }

    /// Records that `query` expired in `key`'s sequence.
    func expire(_ query: String, in key: BenchSequence.Key) {
        sequences.withLockedValue { sequences in
            guard sequences[key] != nil, sequences[key]!.expiredQueries.count < Self.recordsPerSequence else { return }
            sequences[key]!.expiredQueries.insert(query)
        }
    }

    /// Records what a request got, once its answer is out.
    func record(_ record: BenchRequestRecord, for key: BenchSequence.Key) {
        sequences.withLockedValue { sequences in
            guard var sequence = sequences[key], sequence.records.count < Self.recordsPerSequence else { return }
            sequence.records.append(record)
            sequence.records.sort { $0.number < $1.number }
            sequences[key] = sequence
        }
    }

    /// Records what the client says it ended with (the latest word counts).
    func record(_ outcome: BenchClientOutcome, for key: BenchSequence.Key) {
        sequences.withLockedValue { sequences in
            if sequences.count >= Self.limit, sequences[key] == nil { sequences.removeAll() }
            sequences[key, default: BenchSequence()].clientOutcome = outcome
        }
    }

    /// Every sequence so far, in a stable order (run, scenario, file).
    var all: [(key: BenchSequence.Key, sequence: BenchSequence)] {
        sequences.withLockedValue { sequences in
            sequences.map { ($0.key, $0.value) }.sorted {
                ($0.key.run, $0.key.scenario, $0.key.file) < ($1.key.run, $1.key.scenario, $1.key.file)
            }
        }
    }

    /// A seed from the server's seed and the request's place, the same in every process (unlike `Hasher`).
    private func requestSeed(_ key: BenchSequence.Key, number: Int) -> UInt64 {
        var hasher = SHA256()
        withUnsafeBytes(of: seed.littleEndian) { hasher.update(bufferPointer: $0) }
        for part in [key.run, key.scenario, key.file, String(number)] {
            hasher.update(data: Array(part.utf8))
            hasher.update(data: [0])
        }
        return hasher.finalize().withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }
}

/// The requests of one run for one file under one scenario, and what the client ended with.
struct BenchSequence: Sendable {
    /// Which run, scenario and file.
    struct Key: Hashable, Sendable {
        var run: String
        var scenario: String
        var file: String
    }

    /// How many requests came.
    var requestCount = 0
    /// What the first of them got (at most ``BenchRuns/recordsPerSequence``), in order.
    var records: [BenchRequestRecord] = []
    /// What the client says it ended with, if it said.
    var clientOutcome: BenchClientOutcome?
    /// The queries answered as expired: they stay expired.
    var expiredQueries: Set<String> = []
}

/// What one request of a sequence asked for and got.
struct BenchRequestRecord: Sendable, Equatable, Codable {
    /// Its number in the sequence, from 1.
    var number: Int
    var method: String
    /// Its `Range`, `If-Range` and `If-Match`, as sent.
    var range: String?
    var ifRange: String?
    var ifMatch: String?
    /// The faults of its step, as a spec (`none` for none).
    var faults: String
    /// The status answered.
    var status: Int
    /// The body bytes that went out (fewer than the body when it was cut, or the client left).
    var bytesSent: Int64
    /// Whether the body was an injected error page.
    var errorPage: Bool

    enum CodingKeys: String, CodingKey {
        case number, method, range, faults, status
        case ifRange = "if_range"
        case ifMatch = "if_match"
        case bytesSent = "bytes_sent"
        case errorPage = "error_page"
    }
}

/// What a client says it ended with (`PUT /s/<scenario>/<path>`): the SHA-256 of the file it saved, or the error it
/// gave up with and no file.
enum BenchClientOutcome: Sendable, Equatable {
    case saved(sha256: String)
    case failed(message: String)
}
