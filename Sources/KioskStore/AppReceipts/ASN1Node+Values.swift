import Foundation

extension ASN1Node {
    /// This node, checked to carry `tag`; `what` names it in the error.
    func expecting(_ tag: ASN1Tag, _ what: String) throws(AppReceiptParseError) -> ASN1Node {
        guard self.tag == tag else { throw .unexpectedStructure("\(what) is a \(self.tag), not a \(tag)") }
        return self
    }

    /// The elements of a constructed node with `tag` (a `SEQUENCE`, a `SET`, an explicit tag), as a cursor.
    func elements(_ tag: ASN1Tag, _ what: String) throws(AppReceiptParseError) -> ASN1Elements {
        guard self.tag == tag, isConstructed else {
            throw .unexpectedStructure("\(what) is not a constructed \(tag)")
        }
        return ASN1Elements(nodes: children[...], what: what)
    }

    /// The value of a primitive `INTEGER` that fits in 64 bits (two's complement, as X.690 8.3 encodes it).
    func integer(_ what: String) throws(AppReceiptParseError) -> Int64 {
        let bytes = try integerBytes(what)
        guard bytes.count <= 8 else { throw .unexpectedStructure("\(what) does not fit in 64 bits") }
        var value: Int64 = bytes.first.map { $0 & 0x80 != 0 ? -1 : 0 } ?? 0
        for byte in bytes { value = value << 8 | Int64(byte) }
        return value
    }

    /// The content octets of a primitive `INTEGER` (a serial number, which may be longer than 64 bits).
    func integerBytes(_ what: String) throws(AppReceiptParseError) -> ArraySlice<UInt8> {
        guard tag == .integer, !isConstructed, !content.isEmpty else {
            throw .unexpectedStructure("\(what) is not an INTEGER")
        }
        return content
    }

    /// A primitive `OBJECT IDENTIFIER` in dotted form, such as `1.2.840.113549.1.7.2`.
    func objectIdentifier(_ what: String) throws(AppReceiptParseError) -> String {
        guard tag == .objectIdentifier, !isConstructed, let last = content.last, last & 0x80 == 0 else {
            throw .unexpectedStructure("\(what) is not an OBJECT IDENTIFIER")
        }
        var arcs: [UInt64] = []
        var arc: UInt64 = 0
        for byte in content {
            guard arc != 0 || byte != 0x80, arc >> 57 == 0 else {
                throw .unexpectedStructure("\(what) is an OBJECT IDENTIFIER with an arc that is not minimal or huge")
            }
            arc = arc << 7 | UInt64(byte & 0x7F)
            if byte & 0x80 == 0 {
                arcs.append(arc)
                arc = 0
            }
        }
        let first = arcs[0]
        let (top, second) = first < 80 ? (first / 40, first % 40) : (2, first - 80)
        return ([top, second] + arcs.dropFirst()).map(String.init).joined(separator: ".")
    }

    /// The octets of an `OCTET STRING` or character string with `tag`: the content of the primitive form, or the
    /// concatenation of the parts of BER's constructed form (each part being that same string type, X.690 8.7.3).
    func stringBytes(_ tag: ASN1Tag, _ what: String) throws(AppReceiptParseError) -> [UInt8] {
        guard self.tag == tag else { throw .unexpectedStructure("\(what) is a \(self.tag), not a \(tag)") }
        guard isConstructed else { return Array(content) }
        var bytes: [UInt8] = []
        for part in children { bytes += try part.stringBytes(tag, what) }
        return bytes
    }

    /// The text of a `UTF8String` or `IA5String` (an IA5String must be ASCII; a UTF8String valid UTF-8).
    func text(_ what: String) throws(AppReceiptParseError) -> String {
        switch tag {
        case .utf8String:
            guard let text = String(validating: try stringBytes(.utf8String, what), as: UTF8.self) else {
                throw .unexpectedStructure("\(what) is not valid UTF-8")
            }
            return text
        case .ia5String:
            let bytes = try stringBytes(.ia5String, what)
            guard bytes.allSatisfy({ $0 < 0x80 }) else { throw .unexpectedStructure("\(what) is not ASCII") }
            return String(decoding: bytes, as: UTF8.self)
        default:
            throw .unexpectedStructure("\(what) is a \(tag), not a UTF8String or IA5String")
        }
    }

    /// The DER form of this element, optionally under another tag (`SET` for CMS signed attributes, which are
    /// signed as `SET OF` but sent as `[0] IMPLICIT`).
    ///
    /// Lengths become definite and minimal and the constructed strings of BER become primitive; the order of the
    /// elements is kept (a `SET OF` is not re-sorted: the bytes are re-encoded as the signer sent them, as OpenSSL
    /// does when verifying), and primitive contents are kept as they are.
    func derEncoding(as newTag: ASN1Tag? = nil) throws(AppReceiptParseError) -> [UInt8] {
        let tag = newTag ?? tag
        let flattens = isConstructed && tag.isConcatenatedString
        var body: [UInt8] = []
        if flattens {
            body = try stringBytes(tag, "a constructed \(tag)")
        } else if isConstructed {
            for child in children { body += try child.derEncoding() }
        } else {
            body = Array(content)
        }
        return Self.identifierOctets(tag, isConstructed: isConstructed && !flattens) + Self.lengthOctets(body.count)
            + body
    }

    /// The identifier octets of `tag`, in low-tag or high-tag-number form.
    private static func identifierOctets(_ tag: ASN1Tag, isConstructed: Bool) -> [UInt8] {
        let leading = tag.tagClass.rawValue << 6 | (isConstructed ? 0x20 : 0)
        guard tag.number >= 0x1F else { return [leading | UInt8(tag.number)] }
        var octets = [UInt8(tag.number & 0x7F)]
        var rest = tag.number >> 7
        while rest > 0 {
            octets.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
            rest >>= 7
        }
        return [leading | 0x1F] + octets
    }

    /// The definite length octets for `count` content octets, in the shortest form.
    private static func lengthOctets(_ count: Int) -> [UInt8] {
        guard count >= 0x80 else { return [UInt8(count)] }
        var octets: [UInt8] = []
        var rest = count
        while rest > 0 {
            octets.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(octets.count)] + octets
    }
}

/// The elements of a constructed node, read front to back.
struct ASN1Elements {
    /// The elements not read yet.
    private(set) var nodes: ArraySlice<ASN1Node>
    /// What the constructed node is, for error messages.
    let what: String

    /// The next element, which must exist; `name` names it in the error.
    mutating func next(_ name: String) throws(AppReceiptParseError) -> ASN1Node {
        guard let node = nodes.popFirst() else { throw .unexpectedStructure("\(what) lacks its \(name)") }
        return node
    }

    /// The next element if it carries `tag` (an OPTIONAL or DEFAULT component); nil, reading nothing, otherwise.
    mutating func optional(_ tag: ASN1Tag) -> ASN1Node? {
        guard nodes.first?.tag == tag else { return nil }
        return nodes.popFirst()
    }

    /// The next element whatever it is (an optional `ANY`); nil when none is left.
    mutating func nextIfPresent() -> ASN1Node? { nodes.popFirst() }

    /// Checks that every element has been read.
    func finish() throws(AppReceiptParseError) {
        guard nodes.isEmpty else { throw .unexpectedStructure("\(what) has \(nodes.count) unexpected elements") }
    }
}
