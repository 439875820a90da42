/// One `range-spec` of a `Range: bytes=…` request header (RFC 9110 §14.1.1).
///
/// Positions are saturated at `Int64.max`: a position too large for `Int64` behaves like
/// "beyond any representation", which is exactly what such a number means.
public enum RangeSpec: Sendable, Hashable {
    /// `first-last` (an int-range with a last position).
    case closed(first: Int64, last: Int64)
    /// `first-` (an int-range to the end of the representation).
    case from(first: Int64)
    /// `-length` (the final `length` bytes of the representation).
    case suffix(length: Int64)

    /// The bytes this spec selects from a representation of `length` bytes,
    /// or `nil` when the spec is not satisfiable (RFC 9110 §14.1.1).
    ///
    /// An int-range is satisfiable when `first < length`; its end is clamped to `length - 1`.
    /// A suffix-range is satisfiable when its length is positive; a suffix longer than the
    /// representation selects all of it. Nothing is satisfiable in a zero-length representation.
    public func resolved(forLength length: Int64) -> ByteRange? {
        guard length > 0 else { return nil }
        switch self {
        case let .closed(first, last):
            guard first >= 0, first <= last, first < length else { return nil }
            return ByteRange(first: first, last: min(last, length - 1))
        case let .from(first):
            guard first >= 0, first < length else { return nil }
            return ByteRange(first: first, last: length - 1)
        case let .suffix(suffixLength):
            guard suffixLength > 0 else { return nil }
            return ByteRange(first: length - min(suffixLength, length), last: length - 1)
        }
    }
}

/// A parsed `Range` request header field for the `bytes` unit (RFC 9110 §14.1–14.2).
public struct RangeHeader: Sendable, Hashable {
    /// The longest field value (in UTF-8 bytes) that is parsed by default; longer values are ignored.
    public static let defaultMaximumLength = 8 * 1024
    /// The most range-specs parsed by default; a header with more is ignored.
    public static let defaultMaximumSpecCount = 256

    /// The range-specs in request order; never empty.
    public let specs: [RangeSpec]

    /// Parses `bytes=<range-set>`, returning `nil` when the header must be ignored (the caller then serves 200).
    ///
    /// The unit is matched case-insensitively. The range-set is a comma-separated list with optional
    /// whitespace around the commas; empty list elements (`bytes=0-1,,2-3`, `bytes=,0-1`) are tolerated as
    /// RFC 9110 §5.6.1 requires, but at least one range-spec must be present. Numbers are plain decimal
    /// digits and saturate at `Int64.max` instead of overflowing.
    ///
    /// Returns `nil` for another unit, any syntax error (including `first > last`, signs, hex, or spaces inside
    /// a range-spec), a value longer than `maximumLength` UTF-8 bytes, or more than `maximumSpecCount`
    /// range-specs. Parsing stops at the first violation, so memory use is bounded by both limits.
    public init?(
        parsing value: String,
        maximumLength: Int = defaultMaximumLength,
        maximumSpecCount: Int = defaultMaximumSpecCount
    ) {
        guard var scanner = ASCIIScanner(value, maximumLength: maximumLength),
              scanner.consume(caseInsensitive: "bytes"), scanner.consume(.equals)
        else { return nil }

        var specs: [RangeSpec] = []
        var expectingSpec = true
        while !scanner.isAtEnd {
            if scanner.consume(.comma) {
                scanner.skipOptionalWhitespace()
                expectingSpec = true
                continue
            }
            guard expectingSpec, specs.count < maximumSpecCount, let spec = scanner.scanRangeSpec()
            else { return nil }
            specs.append(spec)
            expectingSpec = false
            scanner.skipOptionalWhitespace()
        }
        guard !specs.isEmpty else { return nil }
        self.specs = specs
    }
}

extension ASCIIScanner {
    /// Reads `int-range / suffix-range` (RFC 9110 §14.1.1).
    fileprivate mutating func scanRangeSpec() -> RangeSpec? {
        if consume(.hyphen) {
            guard let suffixLength = scanSaturatedDecimal() else { return nil }
            return .suffix(length: suffixLength.value)
        }
        guard let first = scanSaturatedDecimal(), consume(.hyphen) else { return nil }
        guard peek?.isDigit == true else { return .from(first: first.value) }
        guard let last = scanSaturatedDecimal(), !first.isGreater(than: last) else { return nil }
        return .closed(first: first.value, last: last.value)
    }
}
