import Foundation

/// An ASN.1 identifier: class and number (whether the element is constructed is kept by ``ASN1Node``).
struct ASN1Tag: Hashable, Sendable, CustomStringConvertible {
    /// The two class bits of the identifier octet.
    enum TagClass: UInt8, Sendable {
        case universal = 0
        case application = 1
        case contextSpecific = 2
        case `private` = 3
    }

    /// The tag's class.
    var tagClass: TagClass
    /// The tag's number (below 2^28: a tag number takes at most four base-128 octets here).
    var number: UInt32

    /// `INTEGER`.
    static let integer = ASN1Tag(tagClass: .universal, number: 2)
    /// `OCTET STRING`.
    static let octetString = ASN1Tag(tagClass: .universal, number: 4)
    /// `OBJECT IDENTIFIER`.
    static let objectIdentifier = ASN1Tag(tagClass: .universal, number: 6)
    /// `UTF8String`.
    static let utf8String = ASN1Tag(tagClass: .universal, number: 12)
    /// `SEQUENCE` and `SEQUENCE OF`.
    static let sequence = ASN1Tag(tagClass: .universal, number: 16)
    /// `SET` and `SET OF`.
    static let set = ASN1Tag(tagClass: .universal, number: 17)
    /// `IA5String`.
    static let ia5String = ASN1Tag(tagClass: .universal, number: 22)

    /// The context-specific tag `[number]`.
    static func context(_ number: UInt32) -> ASN1Tag { ASN1Tag(tagClass: .contextSpecific, number: number) }

    /// The string types whose BER constructed form is the concatenation of its parts (X.690 8.7, 8.23): OCTET
    /// STRING and the restricted character strings. (BIT STRING, whose parts each carry an unused-bits octet, is
    /// not among them.)
    var isConcatenatedString: Bool {
        tagClass == .universal && [4, 12, 18, 19, 20, 21, 22, 25, 26, 27, 28, 30].contains(number)
    }

    /// The tag as ASN.1 writes it (`SEQUENCE`, `[0]`), for error messages.
    var description: String {
        switch (tagClass, number) {
        case (.universal, 2): "INTEGER"
        case (.universal, 4): "OCTET STRING"
        case (.universal, 6): "OBJECT IDENTIFIER"
        case (.universal, 12): "UTF8String"
        case (.universal, 16): "SEQUENCE"
        case (.universal, 17): "SET"
        case (.universal, 22): "IA5String"
        case (.universal, _): "UNIVERSAL \(number)"
        case (.application, _): "[APPLICATION \(number)]"
        case (.contextSpecific, _): "[\(number)]"
        case (.private, _): "[PRIVATE \(number)]"
        }
    }
}

/// One BER/DER element, read in full: its tag, its exact encoding, its content octets and, when constructed, its
/// elements.
struct ASN1Node: Hashable, Sendable {
    /// The element's tag.
    let tag: ASN1Tag
    /// Whether the element is constructed (its content is elements) rather than primitive.
    let isConstructed: Bool
    /// The element exactly as it appears in the input: identifier, length, content and, for an indefinite length,
    /// the end-of-contents octets.
    let encoded: ArraySlice<UInt8>
    /// The content octets (without the end-of-contents octets of an indefinite length).
    let content: ArraySlice<UInt8>
    /// The elements of a constructed element, in order; empty for a primitive one.
    let children: [ASN1Node]
}

/// A bounded BER reader (X.690), which reads DER too since DER is a subset of BER.
///
/// It accepts definite lengths (short and long form, non-minimal ones too, as BER does), indefinite lengths closed
/// by end-of-contents (`00 00`), all four tag classes and multi-byte tag numbers. It refuses, with
/// ``AppReceiptParseError/malformedASN1(_:)``, anything it cannot read safely: a length field of more than four
/// octets, a length past the end of the enclosing element, an indefinite length on a primitive element, a missing
/// end-of-contents, nesting deeper than ``maximumDepth``, and bytes after the outermost element. Arithmetic on
/// lengths is checked against the remaining input before any index moves, so no input traps.
struct ASN1Reader {
    /// How deeply elements may nest (the outermost element is depth 0). Apple receipts nest about 12 deep.
    static let maximumDepth = 32

    private let bytes: [UInt8]

    private init(bytes: [UInt8]) { self.bytes = bytes }

    /// Reads one element that must span all of `bytes`.
    static func read(_ bytes: [UInt8]) throws(AppReceiptParseError) -> ASN1Node {
        let reader = ASN1Reader(bytes: bytes)
        var index = 0
        let node = try reader.element(at: &index, end: bytes.count, depth: 0)
        guard index == bytes.count else {
            throw .malformedASN1("\(bytes.count - index) bytes follow the outermost element")
        }
        return node
    }

    /// Reads the element starting at `index`, which must end by `end`, and moves `index` past it.
    private func element(at index: inout Int, end: Int, depth: Int) throws(AppReceiptParseError) -> ASN1Node {
        guard depth <= Self.maximumDepth else {
            throw .malformedASN1("elements nest deeper than \(Self.maximumDepth) levels")
        }
        let start = index
        let (tag, isConstructed) = try identifier(at: &index, end: end)
        guard tag != ASN1Tag(tagClass: .universal, number: 0) else {
            throw .malformedASN1("an end-of-contents at offset \(start) closes no indefinite length")
        }
        let length = try self.length(at: &index, end: end)
        let contentStart = index
        var children: [ASN1Node] = []
        let contentEnd: Int
        if let length {
            contentEnd = index + length
            if isConstructed {
                while index < contentEnd {
                    children.append(try element(at: &index, end: contentEnd, depth: depth + 1))
                }
            }
            index = contentEnd
        } else {
            guard isConstructed else {
                throw .malformedASN1("the primitive element at offset \(start) has an indefinite length")
            }
            while !isEndOfContents(at: index, end: end) {
                guard index < end else {
                    throw .malformedASN1("the indefinite length at offset \(start) has no end-of-contents")
                }
                children.append(try element(at: &index, end: end, depth: depth + 1))
            }
            contentEnd = index
            index += 2
        }
        return ASN1Node(
            tag: tag, isConstructed: isConstructed, encoded: bytes[start..<index],
            content: bytes[contentStart..<contentEnd], children: children)
    }

    /// Whether the two octets at `index` are an end-of-contents (`00 00`).
    private func isEndOfContents(at index: Int, end: Int) -> Bool {
        end - index >= 2 && bytes[index] == 0 && bytes[index + 1] == 0
    }

    /// Reads identifier octets: class, constructed bit and tag number, in low-tag or high-tag-number form.
    private func identifier(at index: inout Int, end: Int) throws(AppReceiptParseError) -> (ASN1Tag, Bool) {
        guard index < end else { throw .malformedASN1("an element is truncated before its tag") }
        let first = bytes[index]
        index += 1
        let tagClass = ASN1Tag.TagClass(rawValue: first >> 6) ?? .private
        let isConstructed = first & 0x20 != 0
        guard first & 0x1F == 0x1F else {
            return (ASN1Tag(tagClass: tagClass, number: UInt32(first & 0x1F)), isConstructed)
        }
        var number: UInt32 = 0
        var octets = 0
        while true {
            guard index < end else { throw .malformedASN1("a multi-byte tag is truncated") }
            let octet = bytes[index]
            index += 1
            octets += 1
            guard octets <= 4 else { throw .malformedASN1("a tag number takes more than four octets") }
            guard octets > 1 || octet != 0x80 else { throw .malformedASN1("a tag number has a leading zero octet") }
            number = number << 7 | UInt32(octet & 0x7F)
            if octet & 0x80 == 0 { break }
        }
        guard number >= 0x1F else { throw .malformedASN1("tag number \(number) is in the high-tag-number form") }
        return (ASN1Tag(tagClass: tagClass, number: number), isConstructed)
    }

    /// Reads length octets: the content length, which fits in what remains before `end`, or `nil` for an
    /// indefinite length.
    private func length(at index: inout Int, end: Int) throws(AppReceiptParseError) -> Int? {
        guard index < end else { throw .malformedASN1("an element is truncated before its length") }
        let first = bytes[index]
        index += 1
        var value: UInt64 = 0
        switch first {
        case 0x80:
            return nil
        case 0xFF:
            throw .malformedASN1("the length octet 0xFF is reserved")
        case 0x00..<0x80:
            value = UInt64(first)
        default:
            let count = Int(first & 0x7F)
            guard count <= 4 else { throw .malformedASN1("a length field takes \(count) octets; at most 4 are read") }
            guard end - index >= count else { throw .malformedASN1("a length field is truncated") }
            for octet in bytes[index..<(index + count)] { value = value << 8 | UInt64(octet) }
            index += count
        }
        guard let length = Int(exactly: value), length <= end - index else {
            throw .malformedASN1("an element claims \(value) content bytes; \(end - index) remain")
        }
        return length
    }
}
