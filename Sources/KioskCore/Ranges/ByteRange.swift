/// An inclusive, non-empty range of byte positions within a representation.
///
/// A `ByteRange` is always resolved against a concrete representation: `first` and `last`
/// are zero-based positions of real bytes, so `length` is at least 1.
public struct ByteRange: Sendable, Hashable {
    /// Zero-based position of the first byte in the range.
    public let first: Int64
    /// Zero-based position of the last byte in the range (inclusive).
    public let last: Int64

    /// Creates a range covering the bytes `first...last`.
    ///
    /// - Precondition: `0 <= first <= last < Int64.max`, so that `length` is representable.
    public init(first: Int64, last: Int64) {
        precondition(first >= 0 && first <= last && last < .max, "invalid byte range \(first)-\(last)")
        self.first = first
        self.last = last
    }

    /// The number of bytes in the range (`last - first + 1`), always at least 1.
    public var length: Int64 { last - first + 1 }
}

/// The value of a `Content-Range` header field for the `bytes` unit (RFC 9110 §14.4).
public enum ContentRange: Sendable, Hashable {
    /// `bytes first-last/complete-length`, or `bytes first-last/*` when the complete length is unknown (`nil`).
    case satisfied(ByteRange, completeLength: Int64?)
    /// `bytes */complete-length`, sent with 416 (Range Not Satisfiable).
    case unsatisfied(completeLength: Int64)

    /// The longest field value ``init(parsing:)`` looks at; anything longer is rejected unread.
    public static let maximumLength = 256

    /// The field value, e.g. `bytes 0-99/1000` or `bytes */1000`.
    public var headerValue: String {
        switch self {
        case let .satisfied(range, completeLength?):
            "bytes \(range.first)-\(range.last)/\(completeLength)"
        case let .satisfied(range, nil):
            "bytes \(range.first)-\(range.last)/*"
        case let .unsatisfied(completeLength):
            "bytes */\(completeLength)"
        }
    }

    /// Strictly parses a `Content-Range` field value, as a client does to check a 206 or 416 response.
    ///
    /// Accepts exactly `bytes SP first-last/length`, `bytes SP first-last/*` and `bytes SP */length`
    /// (the unit is case-insensitive; surrounding optional whitespace is ignored, as for any field value).
    /// Returns `nil` for any other unit, extra whitespace, signs, non-decimal digits, numbers that do not
    /// fit in `Int64`, `first > last`, or a complete length not greater than `last`.
    public init?(parsing value: String) {
        guard var scanner = ASCIIScanner(value, maximumLength: Self.maximumLength),
            scanner.consume(caseInsensitive: "bytes"), scanner.consume(.space)
        else { return nil }

        if scanner.consume(.asterisk) {
            guard scanner.consume(.slash), let completeLength = scanner.scanExactDecimal(), scanner.isAtEnd
            else { return nil }
            self = .unsatisfied(completeLength: completeLength)
            return
        }

        guard let first = scanner.scanExactDecimal(), scanner.consume(.hyphen),
            let last = scanner.scanExactDecimal(), scanner.consume(.slash),
            first <= last, last < .max
        else { return nil }

        let completeLength: Int64?
        if scanner.consume(.asterisk) {
            completeLength = nil
        } else {
            guard let length = scanner.scanExactDecimal(), last < length else { return nil }
            completeLength = length
        }
        guard scanner.isAtEnd else { return nil }
        self = .satisfied(ByteRange(first: first, last: last), completeLength: completeLength)
    }
}

// MARK: - Parsing support shared by the Ranges parsers

extension UInt8 {
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let comma = UInt8(ascii: ",")
    static let hyphen = UInt8(ascii: "-")
    static let slash = UInt8(ascii: "/")
    static let colon = UInt8(ascii: ":")
    static let asterisk = UInt8(ascii: "*")
    static let equals = UInt8(ascii: "=")
    static let quote = UInt8(ascii: "\"")
    static let zero = UInt8(ascii: "0")
    static let nine = UInt8(ascii: "9")

    /// Whether the byte is optional whitespace (SP or HTAB, RFC 9110 §5.6.3).
    var isOptionalWhitespace: Bool { self == .space || self == .tab }

    /// Whether the byte is an ASCII decimal digit.
    var isDigit: Bool { self >= .zero && self <= .nine }
}

/// A run of decimal digits read with saturation: `value` is `Int64.max` when the digits do not fit,
/// while `significantDigits` keeps the exact magnitude for comparisons.
struct SaturatedDecimal {
    /// The value, or `Int64.max` if the digits denote a larger number.
    let value: Int64
    /// Whether the digits denote a number larger than `Int64.max`.
    let isSaturated: Bool
    /// The digits without leading zeros (empty for zero).
    let significantDigits: ArraySlice<UInt8>

    /// Exact numeric comparison of the digit strings, independent of saturation.
    func isGreater(than other: SaturatedDecimal) -> Bool {
        if significantDigits.count != other.significantDigits.count {
            return significantDigits.count > other.significantDigits.count
        }
        return other.significantDigits.lexicographicallyPrecedes(significantDigits)
    }
}

/// A forward-only reader over the ASCII bytes of a header field value, with surrounding
/// optional whitespace already removed.
struct ASCIIScanner {
    private let bytes: [UInt8]
    private var index: Int
    private let end: Int

    /// Returns `nil` without copying when `value` is longer than `maximumLength` UTF-8 bytes.
    init?(_ value: String, maximumLength: Int) {
        guard value.utf8.count <= maximumLength else { return nil }
        let bytes = Array(value.utf8)
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, bytes[start].isOptionalWhitespace { start += 1 }
        while end > start, bytes[end - 1].isOptionalWhitespace { end -= 1 }
        self.bytes = bytes
        self.index = start
        self.end = end
    }

    /// Whether every byte has been consumed.
    var isAtEnd: Bool { index == end }

    /// The next byte, if any, without consuming it.
    var peek: UInt8? { index < end ? bytes[index] : nil }

    /// Consumes `byte` if it is next.
    mutating func consume(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        index += 1
        return true
    }

    /// Consumes `literal` (ASCII) if it is next, byte for byte.
    mutating func consume(exactly literal: String) -> Bool {
        var cursor = index
        for expected in literal.utf8 {
            guard cursor < end, bytes[cursor] == expected else { return false }
            cursor += 1
        }
        index = cursor
        return true
    }

    /// Consumes `literal` (lower-case ASCII letters) if it is next, ignoring ASCII case.
    mutating func consume(caseInsensitive literal: String) -> Bool {
        let candidate = bytes[index..<min(end, index + literal.utf8.count)]
        guard candidate.equalsIgnoringASCIICase(literal) else { return false }
        index = candidate.endIndex
        return true
    }

    /// Consumes the first of `literals` that is next (case-sensitive) and returns its index.
    mutating func consume(oneOf literals: [String]) -> Int? {
        literals.firstIndex { consume(exactly: $0) }
    }

    /// Skips any run of SP / HTAB.
    mutating func skipOptionalWhitespace() {
        while let byte = peek, byte.isOptionalWhitespace { index += 1 }
    }

    /// Consumes bytes while `predicate` holds and returns them.
    mutating func scanRun(while predicate: (UInt8) -> Bool) -> ArraySlice<UInt8> {
        let start = index
        while let byte = peek, predicate(byte) { index += 1 }
        return bytes[start..<index]
    }

    /// Reads `1*DIGIT`, saturating at `Int64.max` instead of overflowing.
    mutating func scanSaturatedDecimal() -> SaturatedDecimal? {
        let start = index
        var value: Int64 = 0
        var isSaturated = false
        while let byte = peek, byte.isDigit {
            index += 1
            guard !isSaturated else { continue }
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = shifted.addingReportingOverflow(Int64(byte - .zero))
            if overflow1 || overflow2 {
                isSaturated = true
                value = .max
            } else {
                value = sum
            }
        }
        guard index > start else { return nil }
        var significantStart = start
        while significantStart < index, bytes[significantStart] == .zero { significantStart += 1 }
        return SaturatedDecimal(
            value: value, isSaturated: isSaturated,
            significantDigits: bytes[significantStart..<index])
    }

    /// Reads `1*DIGIT` that must fit in `Int64`.
    mutating func scanExactDecimal() -> Int64? {
        guard let number = scanSaturatedDecimal(), !number.isSaturated else { return nil }
        return number.value
    }

    /// Reads exactly `count` digits (`count` is small, so the value cannot overflow).
    mutating func scanFixedDigits(_ count: Int) -> Int? {
        guard end - index >= count else { return nil }
        var value = 0
        for offset in 0..<count {
            let byte = bytes[index + offset]
            guard byte.isDigit else { return nil }
            value = value * 10 + Int(byte - .zero)
        }
        index += count
        return value
    }
}
