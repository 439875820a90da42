import Foundation

/// The kinds of fault Kiosk can inject into a content response; the raw value is the `kind` label of
/// `kiosk_faults_injected_total` and the name used in logs.
public enum FaultKind: String, Sendable, CaseIterable, Codable {
    /// Close the connection part way through the body.
    case cut
    /// Send the body no faster than a byte rate.
    case throttle
    /// Pause for a while at a byte offset of the body.
    case stall
    /// Answer an error status instead of the content.
    case status
    /// Answer 200 with the whole file whatever the `Range` header asks.
    case ignoreRange = "ignore_range"
    /// Announce a new `ETag` (and `Last-Modified`), as if the file had changed.
    case etagChange = "etag_change"
    /// Flip one byte of the body.
    case corrupt
    /// Wait before sending the response head.
    case firstByte = "first_byte"
    /// Answer 200 with an HTML error page instead of the content.
    case errorPage = "error_page"
    /// Answer with the validators of another node of a CDN (another `ETag` and `Last-Modified`, the same bytes).
    case node
    /// Answer a range with 206 but no `Content-Range`.
    case noContentRange = "no_content_range"
    /// Answer a range with a `Content-Range` one byte off.
    case rangeOffByOne = "range_off_by_one"
    /// Answer a range that the file holds with 416.
    case refuseRange = "refuse_range"
    /// Reset the connection before sending anything.
    case reset
    /// Send the body a few bytes at a time with pauses between.
    case trickle
    /// Redirect the request to another origin, or to itself.
    case redirect
    /// Announce a `Content-Length` longer or shorter than the body, then close the connection.
    case lengthLie = "length_lie"
    /// Answer 403 as an expired presigned URL does.
    case expire
    /// Answer with another version of the file: other bytes, validators and `Repr-Digest`, with `If-Range` ignored.
    case changed
    /// Send the body gzipped (`Content-Encoding: gzip`), a range's too, as some CDNs do.
    case gzipRange = "gzip_range"

    /// The kinds `chaos` chooses from: the faults a correct resuming client always recovers from, with no help.
    public static let recoverable: [FaultKind] = [
        .cut, .throttle, .stall, .status, .ignoreRange, .etagChange, .corrupt, .firstByte,
    ]
}

/// A body offset a fault applies at: a fixed byte offset, or a random one chosen per response.
public enum FaultOffset: Sendable, Hashable {
    /// This many bytes into the response body.
    case bytes(Int64)
    /// This share of the response body, in hundredths of a percent (`30%` is 3,000), so that a fault lands at the
    /// same place in files of any size.
    case percent(hundredths: Int)
    /// A uniformly random offset inside the response body.
    case random
}

/// A set of faults to inject into a content response, parsed from the fault spec grammar of docs/fault-injection.md
/// ("Fault injection"):
///
/// ```
/// cut=65536;throttle=1MiB/s          status=503,retry-after=2          corrupt=random;p=0.5
/// ```
///
/// Items are separated by `;` or `,`; each is `name` or `name=value`. Names and units are case-insensitive. The
/// item `none` injects nothing: a request sending `Kiosk-Fault: none` is spared the server-wide faults.
public struct FaultSpec: Sendable, Hashable, CustomStringConvertible {
    /// An error status answered instead of the content.
    public struct InjectedStatus: Sendable, Hashable {
        /// The status code: 429, 500 or 503.
        public var code: Int
        /// The `Retry-After` seconds sent with a 429 or 503.
        public var retryAfter: Int?
    }

    /// The validators of one node of a CDN whose nodes disagree: the content's `ETag` with `-n<number>` added (weak
    /// with `/weak`, so that `If-Range` never holds) and its `Last-Modified` moved `number` seconds on.
    public struct ValidatorNode: Sendable, Hashable {
        /// Which node, 1 to 9.
        public var number: Int
        /// Whether its `ETag` is weak.
        public var isWeak: Bool
    }

    /// A body sent a few bytes at a time: `bytes`, then a pause of `pause`, and so on.
    public struct Trickle: Sendable, Hashable {
        public var bytes: Int64
        public var pause: Duration
    }

    /// How `length-lie` lies: the `Content-Length` announces a tenth more than the body (`short`: the body ends early
    /// and the connection closes) or a tenth less (`long`: more bytes come than announced, then the connection
    /// closes).
    public enum LengthLie: String, Sendable, Hashable {
        case short
        case long
    }

    /// Where `redirect` sends the request.
    public enum Redirect: String, Sendable, Hashable {
        /// The same path and query at another origin (`127.0.0.1` and `localhost` swapped), as a CDN does.
        case origin
        /// The same URL again, for ever.
        case loop
    }

    /// A `Content-Range` that lies about a single range.
    public enum ContentRangeFault: String, Sendable, Hashable {
        /// None at all.
        case missing = "no-content-range"
        /// The range one byte further on than the bytes sent.
        case offByOne = "range-off-by-one"
    }

    /// A pause in the body.
    public struct Stall: Sendable, Hashable {
        /// How long to pause.
        public var duration: Duration
        /// How many body bytes to send before pausing.
        public var offset: FaultOffset
    }

    /// Close the connection after this many body bytes.
    public var cut: FaultOffset?
    /// The most body bytes per second.
    public var throttle: Int64?
    /// Pause this long once this many body bytes are sent.
    public var stall: Stall?
    /// Answer this status instead of the content.
    public var status: InjectedStatus?
    /// Answer 200 with the whole file, ignoring `Range`.
    public var ignoreRange = false
    /// Announce a new `ETag`, as if the file had changed.
    public var etagChange = false
    /// Flip the body byte at this offset.
    public var corrupt: FaultOffset?
    /// Wait this long before sending the response head.
    public var firstByte: Duration?
    /// Answer 200 with an HTML error page instead of the content (`error-page`).
    public var errorPage = false
    /// Answer with the validators of this node (`node=N`, `node=N/weak`).
    public var node: ValidatorNode?
    /// Answer a single range with a wrong `Content-Range` (`no-content-range`, `range-off-by-one`).
    public var contentRange: ContentRangeFault?
    /// Answer a range request the file can satisfy with 416 (`refuse-range`).
    public var refuseRange = false
    /// Reset the connection before sending anything (`reset`).
    public var reset = false
    /// Send the body a few bytes at a time (`trickle=<size>/<duration>`).
    public var trickle: Trickle?
    /// Answer with a redirect instead of the content (`redirect=origin`, `redirect=loop`).
    public var redirect: Redirect?
    /// Announce a wrong `Content-Length` (`length-lie=short`, `length-lie=long`).
    public var lengthLie: LengthLie?
    /// Answer 403 as an expired presigned URL does (`expire`).
    public var expire = false
    /// Answer as if the file had been replaced by another version (`changed`): every byte of the body transformed
    /// (``ChangedVersion``), another strong `ETag`, a later `Last-Modified` and the new version's `Repr-Digest`;
    /// `Range` honoured and `If-Range` ignored, as a CDN that stitches the new version into an old download does.
    public var changed = false
    /// Send the body gzipped with `Content-Encoding: gzip` and no `Content-Length` (chunked), a 206's too, whose
    /// `Content-Range` still names the uncompressed range (`gzip-range`).
    public var gzipRange = false
    /// The share of content requests the spec applies to, 0 to 1 (`p=`; 1 when not given).
    public var probability: Double = 1

    /// The largest delay a spec may ask for (`stall`, `first-byte`), so a typo cannot hold a connection for hours.
    public static let maximumDelay = Duration.seconds(300)
    /// The longest spec accepted.
    public static let maximumLength = 512

    /// A spec with no faults.
    public init() {}

    /// Parses a spec such as `cut=65536;throttle=1MiB/s`.
    /// - Throws: ``FaultSpecError`` naming the item that is not understood.
    public init(parsing text: String) throws(FaultSpecError) {
        guard text.utf8.count <= Self.maximumLength else {
            throw FaultSpecError("the fault spec is longer than \(Self.maximumLength) characters")
        }
        let items = text.split(whereSeparator: { $0 == ";" || $0 == "," })
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        guard !items.isEmpty else { throw FaultSpecError("the fault spec is empty") }
        var retryAfter: Int?
        for item in items {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
            let value = parts.count == 2 ? parts[1].trimmingCharacters(in: .whitespaces) : nil
            if parts.count == 2, value?.isEmpty == true { throw FaultSpecError("'\(name)' needs a value") }
            if let flag = Self.switches[name] {
                try Self.checkNoValue(value, name)
                self[keyPath: flag] = true
                continue
            }
            switch name {
            case "cut":
                try Self.checkUnset(cut == nil, name)
                cut = try value.map { v throws(FaultSpecError) in try Self.parseOffset(v, for: name) } ?? .random
            case "throttle":
                try Self.checkUnset(throttle == nil, name)
                throttle = try Self.parseRate(Self.required(value, name))
            case "stall":
                try Self.checkUnset(stall == nil, name)
                let text = try Self.required(value, name)
                let pieces = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
                let duration = try Self.parseDuration(String(pieces[0]), for: name)
                let offset = try pieces.count == 2 ? Self.parseOffset(String(pieces[1]), for: name) : .bytes(0)
                stall = Stall(duration: duration, offset: offset)
            case "status":
                try Self.checkUnset(status == nil, name)
                let text = try Self.required(value, name)
                guard let code = Int(text), [429, 500, 503].contains(code) else {
                    throw FaultSpecError("'status' must be 429, 500 or 503, not '\(text)'")
                }
                status = InjectedStatus(code: code, retryAfter: nil)
            case "retry-after":
                try Self.checkUnset(retryAfter == nil, name)
                let text = try Self.required(value, name)
                guard let seconds = Int(text), (0...3600).contains(seconds) else {
                    throw FaultSpecError("'retry-after' must be whole seconds from 0 to 3600, not '\(text)'")
                }
                retryAfter = seconds
            case "corrupt":
                try Self.checkUnset(corrupt == nil, name)
                corrupt = try value.map { v throws(FaultSpecError) in try Self.parseOffset(v, for: name) } ?? .random
            case "first-byte":
                try Self.checkUnset(firstByte == nil, name)
                firstByte = try Self.parseDuration(Self.required(value, name), for: name)
            case "node":
                try Self.checkUnset(node == nil, name)
                let text = try Self.required(value, name).lowercased()
                let isWeak = text.hasSuffix("/weak")
                let digits = isWeak ? String(text.dropLast("/weak".count)) : text
                guard digits.count == 1, let number = Int(digits), (1...9).contains(number) else {
                    throw FaultSpecError("'node' must be a node from 1 to 9, with /weak for a weak ETag, not '\(text)'")
                }
                node = ValidatorNode(number: number, isWeak: isWeak)
            case "no-content-range", "range-off-by-one":
                try Self.checkNoValue(value, name)
                try Self.checkUnset(contentRange == nil, "no-content-range' or 'range-off-by-one")
                contentRange = ContentRangeFault(rawValue: name)
            case "trickle":
                try Self.checkUnset(trickle == nil, name)
                let text = try Self.required(value, name)
                let pieces = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
                guard pieces.count == 2 else {
                    throw FaultSpecError("'trickle' needs a size and a pause, as in trickle=1KiB/100ms, not '\(text)'")
                }
                let bytes = try Self.parseSize(String(pieces[0]), for: name)
                guard bytes > 0 else { throw FaultSpecError("'trickle' needs at least one byte at a time") }
                trickle = Trickle(bytes: bytes, pause: try Self.parseDuration(String(pieces[1]), for: name))
            case "length-lie":
                try Self.checkUnset(lengthLie == nil, name)
                let text = try Self.required(value, name).lowercased()
                guard let parsed = LengthLie(rawValue: text) else {
                    throw FaultSpecError("'length-lie' must be 'short' or 'long', not '\(text)'")
                }
                lengthLie = parsed
            case "redirect":
                try Self.checkUnset(redirect == nil, name)
                let text = try Self.required(value, name).lowercased()
                guard let parsed = Redirect(rawValue: text) else {
                    throw FaultSpecError("'redirect' must be 'origin' or 'loop', not '\(text)'")
                }
                redirect = parsed
            case "none":
                try Self.checkNoValue(value, name)
            case "p":
                let text = try Self.required(value, name)
                guard let p = Double(text), (0...1).contains(p) else {
                    throw FaultSpecError("'p' must be a probability from 0 to 1, not '\(text)'")
                }
                probability = p
            default:
                throw FaultSpecError("unknown fault '\(name)'")
            }
        }
        if gzipRange, lengthLie != nil {
            // A gzipped body goes out chunked: there is no Content-Length to lie with.
            throw FaultSpecError("'gzip-range' does not go with 'length-lie'")
        }
        if let retryAfter {
            guard var status, status.code != 500 else {
                throw FaultSpecError("'retry-after' goes with 'status=503' or 'status=429'")
            }
            status.retryAfter = retryAfter
            self.status = status
        } else if var status, status.code != 500 {
            status.retryAfter = 1
            self.status = status
        }
    }

    /// The kinds of fault this spec injects.
    public var kinds: [FaultKind] {
        var kinds: [FaultKind] = []
        if firstByte != nil { kinds.append(.firstByte) }
        if status != nil { kinds.append(.status) }
        if ignoreRange { kinds.append(.ignoreRange) }
        if etagChange { kinds.append(.etagChange) }
        if throttle != nil { kinds.append(.throttle) }
        if stall != nil { kinds.append(.stall) }
        if corrupt != nil { kinds.append(.corrupt) }
        if cut != nil { kinds.append(.cut) }
        if errorPage { kinds.append(.errorPage) }
        if node != nil { kinds.append(.node) }
        switch contentRange {
        case .missing: kinds.append(.noContentRange)
        case .offByOne: kinds.append(.rangeOffByOne)
        case nil: break
        }
        if refuseRange { kinds.append(.refuseRange) }
        if reset { kinds.append(.reset) }
        if trickle != nil { kinds.append(.trickle) }
        if redirect != nil { kinds.append(.redirect) }
        if lengthLie != nil { kinds.append(.lengthLie) }
        if expire { kinds.append(.expire) }
        if changed { kinds.append(.changed) }
        if gzipRange { kinds.append(.gzipRange) }
        return kinds
    }

    /// Whether the spec changes the bytes, the encoding or the pace of the body (such a body is streamed in chunks,
    /// not with `sendfile`).
    public var altersBodyStream: Bool {
        cut != nil || throttle != nil || stall != nil || corrupt != nil || trickle != nil || lengthLie != nil
            || changed || gzipRange
    }

    /// The spec in its canonical form (parsing it gives the same spec).
    public var description: String {
        var items: [String] = []
        if let firstByte { items.append("first-byte=\(Self.format(firstByte))") }
        if let status {
            items.append("status=\(status.code)")
            if let retryAfter = status.retryAfter { items.append("retry-after=\(retryAfter)") }
        }
        if ignoreRange { items.append("ignore-range") }
        if etagChange { items.append("etag-change") }
        if let throttle { items.append("throttle=\(throttle)/s") }
        if let stall { items.append("stall=\(Self.format(stall.duration))@\(Self.format(stall.offset))") }
        if let corrupt { items.append("corrupt=\(Self.format(corrupt))") }
        if errorPage { items.append("error-page") }
        if let node { items.append("node=\(node.number)\(node.isWeak ? "/weak" : "")") }
        if let contentRange { items.append(contentRange.rawValue) }
        if refuseRange { items.append("refuse-range") }
        if reset { items.append("reset") }
        if let trickle { items.append("trickle=\(trickle.bytes)/\(Self.format(trickle.pause))") }
        if let redirect { items.append("redirect=\(redirect.rawValue)") }
        if let lengthLie { items.append("length-lie=\(lengthLie.rawValue)") }
        if expire { items.append("expire") }
        if changed { items.append("changed") }
        if gzipRange { items.append("gzip-range") }
        if let cut { items.append("cut=\(Self.format(cut))") }
        if probability < 1 { items.append("p=\(probability)") }
        return items.isEmpty ? "none" : items.joined(separator: ";")
    }

    // MARK: Values

    /// The items that take no value and switch a fault on, by name.
    private static let switches: [String: WritableKeyPath<FaultSpec, Bool> & Sendable] = [
        "ignore-range": \.ignoreRange, "etag-change": \.etagChange, "error-page": \.errorPage,
        "refuse-range": \.refuseRange, "reset": \.reset, "expire": \.expire, "changed": \.changed,
        "gzip-range": \.gzipRange,
    ]

    private static func checkUnset(_ isUnset: Bool, _ name: String) throws(FaultSpecError) {
        guard isUnset else { throw FaultSpecError("'\(name)' is given twice") }
    }

    private static func checkNoValue(_ value: String?, _ name: String) throws(FaultSpecError) {
        guard value == nil else { throw FaultSpecError("'\(name)' takes no value") }
    }

    private static func required(_ value: String?, _ name: String) throws(FaultSpecError) -> String {
        guard let value else { throw FaultSpecError("'\(name)' needs a value, as in \(example(name))") }
        return value
    }

    private static func example(_ name: String) -> String {
        switch name {
        case "throttle": "throttle=1MiB/s"
        case "stall": "stall=2s@1048576"
        case "status": "status=503"
        case "retry-after": "retry-after=2"
        case "first-byte": "first-byte=500ms"
        case "node": "node=2"
        case "trickle": "trickle=1KiB/100ms"
        case "redirect": "redirect=origin"
        case "length-lie": "length-lie=short"
        default: "p=0.5"
        }
    }

    /// `random`, a share of the body (`30%`, `12.5%`: below 100 %, at most two decimals) or a size.
    private static func parseOffset(_ text: String, for name: String) throws(FaultSpecError) -> FaultOffset {
        if text.lowercased() == "random" { return .random }
        guard text.hasSuffix("%") else { return .bytes(try parseSize(text, for: name)) }
        let number = text.dropLast()
        let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts[0].allSatisfy({ $0.isASCII && $0.isNumber }), let whole = Int(parts[0]), whole < 100,
            parts.count == 1 || (1...2).contains(parts[1].count) && parts[1].allSatisfy({ $0.isASCII && $0.isNumber })
        else {
            throw FaultSpecError("'\(name)' needs a share of the body below 100 % such as 30% or 12.5%, not '\(text)'")
        }
        let fraction = parts.count == 2 ? Int(parts[1].padding(toLength: 2, withPad: "0", startingAt: 0))! : 0
        return .percent(hundredths: whole * 100 + fraction)
    }

    /// A byte count: digits with an optional unit `B`, `K`/`KB`/`KiB`, `M`/`MB`/`MiB`, `G`/`GB`/`GiB` (all
    /// multiples of 1024).
    static func parseSize(_ text: String, for name: String) throws(FaultSpecError) -> Int64 {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        let unit = text.dropFirst(digits.count).lowercased()
        let multiplier: Int64? =
            switch unit {
            case "", "b": 1
            case "k", "kb", "kib": 1 << 10
            case "m", "mb", "mib": 1 << 20
            case "g", "gb", "gib": 1 << 30
            default: nil
            }
        guard !digits.isEmpty, digits.count <= 15, let number = Int64(digits), let multiplier else {
            throw FaultSpecError("'\(name)' needs a byte count such as 65536 or 64KiB, not '\(text)'")
        }
        let (size, overflow) = number.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { throw FaultSpecError("'\(name)' is too large") }
        return size
    }

    /// A rate: a size per second, with or without `/s`; at least 1 byte per second.
    private static func parseRate(_ text: String) throws(FaultSpecError) -> Int64 {
        let lowered = text.lowercased()
        let size = lowered.hasSuffix("/s") ? String(text.dropLast(2)) : text
        let rate = try parseSize(size, for: "throttle")
        guard rate > 0 else { throw FaultSpecError("'throttle' must be at least 1 byte per second") }
        return rate
    }

    /// A duration: a number with the unit `ms` or `s` (`500ms`, `2s`, `1.5s`), at most ``maximumDelay``.
    static func parseDuration(_ text: String, for name: String) throws(FaultSpecError) -> Duration {
        let lowered = text.lowercased()
        let (number, scale): (Substring, Double) =
            lowered.hasSuffix("ms")
            ? (lowered.dropLast(2), 1e-3)
            : lowered.hasSuffix("s") ? (lowered.dropLast(1), 1) : ("", 0)
        guard scale > 0, !number.isEmpty, number.allSatisfy({ $0.isNumber || $0 == "." }), let value = Double(number)
        else { throw FaultSpecError("'\(name)' needs a duration such as 500ms or 2s, not '\(text)'") }
        let milliseconds = (value * scale * 1000).rounded()
        guard milliseconds <= 300_000 else {
            throw FaultSpecError("'\(name)' may be at most \(format(maximumDelay)), not '\(text)'")
        }
        return .milliseconds(Int64(milliseconds))
    }

    static func format(_ duration: Duration) -> String {
        let milliseconds = Int64(duration / .milliseconds(1))
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)s" : "\(milliseconds)ms"
    }

    private static func format(_ offset: FaultOffset) -> String {
        switch offset {
        case .bytes(let count): String(count)
        case .percent(let hundredths):
            switch hundredths % 100 {
            case 0: "\(hundredths / 100)%"
            case let fraction where fraction % 10 == 0: "\(hundredths / 100).\(fraction / 10)%"
            case let fraction: "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)%"
            }
        case .random: "random"
        }
    }
}

/// Why a fault spec was refused: a sentence naming the item at fault.
public struct FaultSpecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. `unknown fault 'cutt'`.
    public let description: String

    init(_ description: String) { self.description = description }
}
