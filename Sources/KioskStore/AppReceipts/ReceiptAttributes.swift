import Foundation
import KioskCore

/// The attributes of one receipt payload or in-app purchase receipt: a `SET OF ReceiptAttribute`, where
/// `ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`, grouped by type.
///
/// Values are decoded only when asked for, so unknown attributes are skipped unread. A single-valued attribute
/// present twice is refused rather than one of its values chosen, and an empty string or date counts as absent.
struct ReceiptAttributes {
    /// The value octets of each attribute, by type, in receipt order.
    private let values: [Int: [[UInt8]]]

    /// Reads the attribute set encoded in `bytes`.
    init(_ bytes: [UInt8], _ what: String) throws(AppReceiptParseError) {
        var attributes = try ASN1Reader.read(bytes).elements(.set, what)
        var values: [Int: [[UInt8]]] = [:]
        while let node = attributes.nextIfPresent() {
            var attribute = try node.elements(.sequence, "an attribute of \(what)")
            let type = try attribute.next("type").integer("an attribute type")
            _ = try attribute.next("version").integer("an attribute version")
            let value = try attribute.next("value").stringBytes(.octetString, "an attribute value")
            try attribute.finish()
            guard let type = Int(exactly: type) else { continue }
            values[type, default: []].append(value)
        }
        self.values = values
    }

    /// Every value of a repeated attribute (type 17, the in-app purchase receipts).
    func all(_ type: Int) -> [[UInt8]] { values[type] ?? [] }

    /// The raw octets of a single-valued attribute (the opaque value and the SHA-1 hash).
    func octets(_ type: Int) throws(AppReceiptParseError) -> Data? {
        try single(type).map { Data($0) }
    }

    /// A single-valued attribute holding a `UTF8String` or `IA5String`; nil if absent or empty.
    func string(_ type: Int) throws(AppReceiptParseError) -> String? {
        guard let value = try single(type) else { return nil }
        do throws(AppReceiptParseError) {
            let text = try ASN1Reader.read(value).text("the value")
            return text.isEmpty ? nil : text
        } catch {
            throw .invalidAttribute(type: type, reason: error.message)
        }
    }

    /// A single-valued string attribute that must be present and not empty.
    func requiredString(_ type: Int) throws(AppReceiptParseError) -> String {
        guard let text = try string(type) else { throw .missingAttribute(type: type) }
        return text
    }

    /// A single-valued attribute holding an `INTEGER`; nil if absent.
    func integer(_ type: Int) throws(AppReceiptParseError) -> Int64? {
        guard let value = try single(type) else { return nil }
        do throws(AppReceiptParseError) {
            return try ASN1Reader.read(value).integer("the value")
        } catch {
            throw .invalidAttribute(type: type, reason: error.message)
        }
    }

    /// A single-valued attribute holding an `IA5String` date; nil if absent or empty.
    func date(_ type: Int) throws(AppReceiptParseError) -> Date? {
        guard let text = try string(type) else { return nil }
        guard let date = Self.date(from: text) else {
            throw .invalidAttribute(type: type, reason: "'\(text.prefix(40))' is not an RFC 3339 date")
        }
        return date
    }

    /// A single-valued date attribute that must be present and not empty.
    func requiredDate(_ type: Int) throws(AppReceiptParseError) -> Date {
        guard let date = try date(type) else { throw .missingAttribute(type: type) }
        return date
    }

    /// The value of an attribute that may appear at most once.
    private func single(_ type: Int) throws(AppReceiptParseError) -> [UInt8]? {
        guard let found = values[type] else { return nil }
        guard found.count == 1 else { throw .invalidAttribute(type: type, reason: "it appears \(found.count) times") }
        return found[0]
    }

    /// Parses a receipt date: RFC 3339 (`2024-02-23T17:27:16Z`, `…+01:00`), or with an offset without a colon
    /// (`2024-02-23T18:27:16+0100`), as some receipts write it.
    static func date(from text: String) -> Date? {
        var characters = Array(text)
        if characters.count > 5, ["+", "-"].contains(characters[characters.count - 5]),
            characters.suffix(4).allSatisfy(\.isASCIIDigit)
        {
            characters.insert(":", at: characters.count - 2)
        }
        return RFC3339.date(from: String(characters))
    }
}
