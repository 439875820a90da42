import KioskCore

/// What a client's `Accept-*` fields accept, for the answers that come in several forms (the catalog and grants,
/// gzipped or not).
enum ContentNegotiation {
    /// Whether an `Accept-Encoding` value accepts gzip (RFC 9110 §12.5.3): the quality of an explicit `gzip` or
    /// `x-gzip` entry if there is one, otherwise that of `*`, must be above zero. Codings and the `q` parameter are
    /// matched without regard to case; a quality that is not a number counts as zero.
    ///
    /// Read byte by byte, without allocating: every catalog request of a launch-day spike carries the field.
    static func acceptsGzip(_ value: String?) -> Bool {
        guard let value else { return false }
        var explicit: Bool?
        var wildcard: Bool?
        var rest = value.utf8[...]
        while !rest.isEmpty {
            let end = rest.firstIndex(of: UInt8(ascii: ",")) ?? rest.endIndex
            let entry = rest[..<end]
            rest = end == rest.endIndex ? rest[end...] : rest[rest.index(after: end)...]
            let codingEnd = entry.firstIndex(of: UInt8(ascii: ";")) ?? entry.endIndex
            let coding = entry[..<codingEnd].trimmingOptionalWhitespace
            let isGzip = coding.equalsIgnoringASCIICase("gzip") || coding.equalsIgnoringASCIICase("x-gzip")
            guard isGzip || coding.elementsEqual("*".utf8) else { continue }
            let accepted = qualityIsPositive(parameters: entry[codingEnd...])
            if isGzip {
                explicit = (explicit ?? false) || accepted
            } else {
                wildcard = accepted
            }
        }
        return explicit ?? wildcard ?? false
    }

    /// Whether the first `q` parameter among `parameters` (`;name=value…`) is above zero; without one, the quality
    /// is 1.
    private static func qualityIsPositive(parameters: Substring.UTF8View) -> Bool {
        var rest = parameters
        while !rest.isEmpty {
            rest = rest.dropFirst()  // the `;`
            let end = rest.firstIndex(of: UInt8(ascii: ";")) ?? rest.endIndex
            let parameter = rest[..<end].trimmingOptionalWhitespace
            rest = rest[end...]
            guard parameter.prefix(2).equalsIgnoringASCIICase("q=") else { continue }
            return isPositiveNumber(parameter.dropFirst(2))
        }
        return true
    }

    /// Whether `text` is a decimal number (digits, at most one `.`, at least one digit) above zero.
    private static func isPositiveNumber(_ text: Substring.UTF8View) -> Bool {
        var digits = 0
        var dots = 0
        var positive = false
        for byte in text {
            switch byte {
            case UInt8(ascii: "0"): digits += 1
            case UInt8(ascii: "1")...UInt8(ascii: "9"):
                digits += 1
                positive = true
            case UInt8(ascii: "."): dots += 1
            default: return false
            }
        }
        return digits > 0 && dots <= 1 && positive
    }
}
