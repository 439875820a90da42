import HTTPTypes
import Hummingbird
import KioskCore
import Logging
import NIOConcurrencyHelpers

/// Decides which faults a content request gets: the per-request spec (`Kiosk-Fault` header or `fault` query
/// parameter) when there is one, otherwise the server's ``FaultProfile``, each subject to its probability.
///
/// Exists only when the operator enabled faults (`kiosk serve --faults …`); a server without one ignores the
/// header and the query parameter. Its random choices come from a seedable generator, so a run started with
/// `--faults-seed` can be repeated.
public final class FaultInjector: Sendable {
    /// The request header carrying a per-request fault spec.
    public static let headerName = HTTPField.Name("Kiosk-Fault")!
    /// The query parameter carrying a per-request fault spec, for clients that cannot set headers.
    public static let queryParameter = "fault"

    /// The server-wide faults.
    public let profile: FaultProfile
    private let generator: NIOLockedValueBox<SplitMix64>
    /// The downloads (purchase and file, hashed) that a server-wide fault (chaos or the profile's `corrupt`) has
    /// corrupted once already.
    private let corruptedDownloads = NIOLockedValueBox(Set<Int>())
    /// How many corrupted downloads are remembered before the memory starts over (about 2 MB at most).
    static let corruptedDownloadsLimit = 100_000

    /// An injector for `profile`, drawing from a generator seeded with `seed` (a random seed when nil).
    public init(profile: FaultProfile, seed: UInt64? = nil) {
        self.profile = profile
        self.generator = NIOLockedValueBox(SplitMix64(seed: seed ?? UInt64.random(in: .min ... .max)))
    }

    /// The spec the request asks for itself, if any (the header wins over the query parameter).
    /// - Throws: a `bad_request` ``APIError`` naming the problem when the spec does not parse.
    static func requestedSpec(in request: Request) throws(APIError) -> FaultSpec? {
        let text = request.headers[Self.headerName] ?? request.uri.queryParameters.get(Self.queryParameter)
        guard let text else { return nil }
        do {
            return try FaultSpec(parsing: text)
        } catch {
            throw APIError.badRequest("The fault spec is not valid: \(error).")
        }
    }

    /// The faults to inject into one content response, or nil for none: the request's own spec when it has one
    /// (``requestedSpec(in:)``), otherwise the profile's; `download` identifies the purchase and file
    /// (``downloadKey(transactionID:path:)``).
    ///
    /// The profile corrupts a download at most once, as chaos does: a later response for the same purchase and
    /// file gets the spec's other faults but intact bytes, so that a correct client that fetches a damaged file
    /// again succeeds. A per-request spec is the client's own choice and corrupts every time it asks. A `download`
    /// of nil (a pack, whose body holds many files) leaves that rule to the caller, file by file
    /// (``isFirstCorruption(of:)``).
    func faults(requested: FaultSpec?, download: Int?) -> FaultSpec? {
        let profileSpec: FaultSpec
        if let requested {
            return isDrawn(requested.probability) ? requested : nil
        }
        switch profile {
        case .requestOnly: return nil
        case .spec(let spec): profileSpec = spec
        case .chaos(let probability): return chaos(probability: probability, download: download)
        }
        guard isDrawn(profileSpec.probability) else { return nil }
        var spec = profileSpec
        if spec.corrupt != nil, let download, !isFirstCorruption(of: download) {
            spec.corrupt = nil
            if spec.kinds.isEmpty { return nil }
        }
        return spec
    }

    /// With `probability`, one fault of a random kind with random, recoverable parameters: cuts anywhere, pauses of
    /// at most 1.5 s, error statuses with `Retry-After: 1`, rates of at least 512 KiB/s. A `download` (purchase
    /// and file) is corrupted at most once, so that a client that downloads a damaged file again gets it intact,
    /// even with a new grant.
    func chaos(probability: Double, download: Int? = nil) -> FaultSpec? {
        guard draw() < probability else { return nil }
        var kind = generator.withLockedValue { FaultKind.recoverable.randomElement(using: &$0)! }
        if kind == .corrupt, let download, !isFirstCorruption(of: download) {
            kind = generator.withLockedValue {
                FaultKind.recoverable.filter { $0 != .corrupt }.randomElement(using: &$0)!
            }
        }
        return generator.withLockedValue { random in
            var spec = FaultSpec()
            switch kind {
            case .cut: spec.cut = .random
            case .throttle: spec.throttle = Int64.random(in: (512 << 10)...(4 << 20), using: &random)
            case .stall:
                spec.stall = .init(
                    duration: .milliseconds(Int64.random(in: 200...1500, using: &random)), offset: .random)
            case .status:
                let code = [429, 500, 503].randomElement(using: &random)!
                spec.status = .init(code: code, retryAfter: code == 500 ? nil : 1)
            case .ignoreRange: spec.ignoreRange = true
            case .etagChange: spec.etagChange = true
            case .corrupt: spec.corrupt = .random
            case .firstByte: spec.firstByte = .milliseconds(Int64.random(in: 100...1000, using: &random))
            case .errorPage, .node, .noContentRange, .rangeOffByOne, .refuseRange, .reset, .trickle, .redirect,
                .lengthLie, .expire, .changed, .gzipRange:
                preconditionFailure("chaos draws from FaultKind.recoverable only")
            }
            return spec
        }
    }

    /// The body offset `offset` names in a body of `length` bytes, or nil when it falls outside the body.
    func resolve(_ offset: FaultOffset?, length: Int64) -> Int64? {
        switch offset {
        case nil: return nil
        case .bytes(let count): return count < length ? count : nil
        case .percent(let hundredths):
            guard length > 0 else { return nil }
            return length * Int64(hundredths) / 10_000
        case .random:
            guard length > 0 else { return nil }
            return generator.withLockedValue { Int64.random(in: 0..<length, using: &$0) }
        }
    }

    /// The byte-stream faults of `spec` for a body of `length` bytes, or nil when none of them falls inside it.
    func bodyFaults(_ spec: FaultSpec, length: Int64) -> BodyFaults? {
        let faults = BodyFaults(
            cutAt: resolve(spec.cut, length: length), bytesPerSecond: spec.throttle,
            stall: spec.stall.flatMap { stall in
                resolve(stall.offset, length: length).map { BodyFaults.Stall(offset: $0, duration: stall.duration) }
            },
            corruptAt: resolve(spec.corrupt, length: length), trickle: length > 0 ? spec.trickle : nil,
            closeAfter: spec.lengthLie != nil && length > 0 ? length : nil, changesBytes: spec.changed && length > 0,
            gzip: spec.gzipRange)
        return faults.isEmpty ? nil : faults
    }

    /// A random tag suffix, so that every changed ETag differs from every other.
    func nonce() -> UInt64 { generator.withLockedValue { $0.next() } }

    /// Whether a server-wide fault may corrupt `download` (true once per download, until the memory of
    /// ``corruptedDownloadsLimit`` downloads starts over).
    /// Whether `download` (``downloadKey(transactionID:path:)``) was never corrupted by a server-wide fault, and
    /// records that it is now.
    func isFirstCorruption(of download: Int) -> Bool {
        corruptedDownloads.withLockedValue { downloads in
            if downloads.count >= Self.corruptedDownloadsLimit { downloads.removeAll() }
            return downloads.insert(download).inserted
        }
    }

    /// Identifies the downloads of one file for one purchase: the grant's transaction ID and the path, hashed.
    static func downloadKey(transactionID: String, path: String) -> Int {
        var hasher = Hasher()
        hasher.combine(transactionID)
        hasher.combine(path)
        return hasher.finalize()
    }

    /// Counts an injected fault in `kiosk_faults_injected_total` and logs it (the logger carries the request ID).
    static func record(_ kind: FaultKind, metadata: Logger.Metadata = [:], metrics: ServerMetrics, logger: Logger) {
        metrics.recordFault(kind)
        logger.notice("fault injected", metadata: metadata.merging(["fault": "\(kind.rawValue)"]) { _, new in new })
    }

    private func draw() -> Double { generator.withLockedValue { Double.random(in: 0..<1, using: &$0) } }

    /// Whether a spec of `probability` applies to this request (no draw when it always does).
    private func isDrawn(_ probability: Double) -> Bool { probability >= 1 || draw() < probability }
}

/// The byte-stream faults of one response body, at concrete offsets.
struct BodyFaults: Sendable, Equatable {
    /// A pause once `offset` body bytes are sent.
    struct Stall: Sendable, Equatable {
        var offset: Int64
        var duration: Duration
    }

    /// Close the connection once this many body bytes are sent.
    var cutAt: Int64?
    /// The most body bytes per second.
    var bytesPerSecond: Int64?
    /// A pause.
    var stall: Stall?
    /// Flip the body byte at this offset.
    var corruptAt: Int64?
    /// Send a few bytes at a time, with a pause after each.
    var trickle: FaultSpec.Trickle?
    /// Close the connection once this many body bytes are sent, the body's end (`length-lie`).
    var closeAfter: Int64?
    /// Send every content byte as ``ChangedVersion`` has it (`changed`).
    var changesBytes = false
    /// Send the body gzipped, as one gzip member (`gzip-range`, even for an empty body).
    var gzip = false

    /// Whether there is nothing to do to the body.
    var isEmpty: Bool {
        cutAt == nil && bytesPerSecond == nil && stall == nil && corruptAt == nil && trickle == nil
            && closeAfter == nil && !changesBytes && !gzip
    }
}
