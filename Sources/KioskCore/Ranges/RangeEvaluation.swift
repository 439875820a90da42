import Foundation

/// What the server knows about the file it is about to serve.
public struct RepresentationMetadata: Sendable {
    /// The size of the representation in bytes.
    public var length: Int64
    /// The representation's (strong) entity-tag, as sent in `ETag`.
    public var entityTag: EntityTag
    /// The modification time, as sent (truncated to whole seconds) in `Last-Modified`.
    public var lastModified: Date

    /// Creates the metadata of a representation.
    public init(length: Int64, entityTag: EntityTag, lastModified: Date) {
        self.length = length
        self.entityTag = entityTag
        self.lastModified = lastModified
    }
}

/// How to answer a GET or HEAD request for a representation, as far as ranges are concerned.
public enum RangeDecision: Sendable, Equatable {
    /// 200 (OK) with the whole representation.
    case full
    /// 206 (Partial Content) with one range and a `Content-Range` header.
    case single(ByteRange)
    /// 206 (Partial Content) with a `multipart/byteranges` body holding these ranges, in request order.
    case multiple([ByteRange])
    /// 416 (Range Not Satisfiable) with `Content-Range: bytes */<length>`.
    case unsatisfiable
}

/// Decides how to answer a request's `Range` and `If-Range` headers (RFC 9110 §13.1.5 and §14).
public struct RangeRequestEvaluator: Sendable {
    /// The most range-specs honored in one request; a `Range` header with more is ignored (200).
    public var maxRanges: Int

    /// Creates an evaluator that honors at most `maxRanges` range-specs per request.
    public init(maxRanges: Int = 16) {
        self.maxRanges = maxRanges
    }

    /// Evaluates a GET or HEAD request against `representation`.
    ///
    /// - Parameters:
    ///   - isHead: whether the request is a HEAD; HEAD ignores `Range` and always gets ``RangeDecision/full``.
    ///   - range: the `Range` field value, if present. An absent, invalid, non-`bytes`, overlong value, or
    ///     one with more than ``maxRanges`` range-specs, yields ``RangeDecision/full``.
    ///   - ifRange: the `If-Range` field value, if present. An entity-tag must match the representation's
    ///     tag by strong comparison (a weak tag never matches); an HTTP-date must equal `lastModified` to the
    ///     second. Otherwise, or if malformed, the range is ignored and the answer is ``RangeDecision/full``.
    ///   - representation: the representation being served.
    ///   - now: the current time, against which a two-digit year in an `If-Range` date is read (the server passes
    ///     its clock's).
    /// - Returns: ``RangeDecision/unsatisfiable`` when no range-spec is satisfiable, ``RangeDecision/single(_:)``
    ///   for one satisfiable range, ``RangeDecision/multiple(_:)`` for several (unsatisfiable specs are dropped),
    ///   or ``RangeDecision/full`` when the satisfiable ranges together are longer than the representation
    ///   (overlapping ranges used to amplify the response).
    public func evaluate(
        method isHead: Bool,
        range: String?,
        ifRange: String?,
        representation: RepresentationMetadata,
        now: Date = Date()
    ) -> RangeDecision {
        guard !isHead, let range,
              let header = RangeHeader(parsing: range, maximumSpecCount: maxRanges)
        else { return .full }
        if let ifRange, !Self.ifRangeHolds(ifRange, for: representation, now: now) {
            return .full
        }

        var ranges: [ByteRange] = []
        var totalLength: Int64 = 0
        for spec in header.specs {
            guard let byteRange = spec.resolved(forLength: representation.length) else { continue }
            let (sum, overflow) = totalLength.addingReportingOverflow(byteRange.length)
            guard !overflow, sum <= representation.length else { return .full }
            totalLength = sum
            ranges.append(byteRange)
        }

        switch ranges.count {
        case 0: return .unsatisfiable
        case 1: return .single(ranges[0])
        default: return .multiple(ranges)
        }
    }

    /// The If-Range condition (RFC 9110 §13.1.5): a strong entity-tag match or an exact Last-Modified match.
    private static func ifRangeHolds(_ value: String, for representation: RepresentationMetadata, now: Date) -> Bool {
        if let tag = EntityTag(parsing: value) {
            return tag.matchesStrongly(representation.entityTag)
        }
        guard let seconds = HTTPDate.parseSeconds(value, relativeTo: now) else { return false }
        return seconds == HTTPDate.wholeSeconds(of: representation.lastModified)
    }
}
