/// Byte-level reading of HTTP field values, shared by the parsers that must not allocate (`Range`, and on the
/// server `Accept-Encoding` and `Authorization`).
extension BidirectionalCollection where Element == UInt8 {
    /// Whether these bytes are `lowercase`'s, its ASCII letters matched without regard to case and every other
    /// byte exactly (`x-gzip` matches `X-GZIP`).
    package func equalsIgnoringASCIICase(_ lowercase: String) -> Bool {
        elementsEqual(lowercase.utf8) { byte, expected in
            byte == expected || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(expected) && byte | 0x20 == expected
        }
    }

    /// These bytes without the optional whitespace (SP, HTAB; RFC 9110 §5.6.3) around them.
    package var trimmingOptionalWhitespace: SubSequence {
        guard let first = firstIndex(where: { !$0.isOptionalWhitespace }),
            let last = lastIndex(where: { !$0.isOptionalWhitespace })
        else { return self[endIndex...] }
        return self[first...last]
    }
}
