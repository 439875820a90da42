import Foundation
import KioskStore
import SwiftASN1
import Testing
import X509

/// The four app receipts of `Fixtures/apple` and their expected reading (`expected.json`).
enum AppReceiptFixture: String, CaseIterable, CustomTestStringConvertible {
    case production = "TPInAppReceipt/receipt-production"
    case xcodeWithPurchases = "TPInAppReceipt/receipt-xcode-with-purchases"
    case xcodeEmpty = "app-store-server-library-swift/xcode/xcode-app-receipt-empty"
    case xcodeWithTransaction = "app-store-server-library-swift/xcode/xcode-app-receipt-with-transaction"

    /// The path, as test results name the case.
    var testDescription: String { rawValue }

    /// The receipt's base64 text, as the file holds it.
    func base64() throws -> String {
        try String(contentsOf: AppleFixtures.folder.appendingPathComponent(rawValue), encoding: .utf8)
    }

    /// The receipt's binary form.
    func der() throws -> Data {
        try #require(Data(base64Encoded: base64().trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// The receipt's entry of `expected.json`.
    func expected() throws -> [String: Any] {
        let data = try Data(contentsOf: AppleFixtures.folder.appendingPathComponent("expected.json"))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let receipts = try #require(root["receipts"] as? [String: Any])
        return try #require(receipts[rawValue] as? [String: Any])
    }

    /// A PEM certificate of the fixtures folder (`AppleIncRootCertificate.pem`, `AppleRootCA-G3.pem`,
    /// `StoreKitTestCertificate.pem`).
    static func certificate(_ name: String) throws -> Certificate {
        try Certificate(
            pemEncoded: String(contentsOf: AppleFixtures.folder.appendingPathComponent(name), encoding: .utf8))
    }
}

/// A minimal DER (and BER) writer for building receipts and hostile inputs in tests.
enum TestDER {
    /// An element with a definite, minimal length.
    static func element(_ identifier: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8] = []
        if content.count < 0x80 {
            length = [UInt8(content.count)]
        } else {
            var rest = content.count
            while rest > 0 {
                length.insert(UInt8(rest & 0xFF), at: 0)
                rest >>= 8
            }
            length.insert(0x80 | UInt8(length.count), at: 0)
        }
        return [identifier] + length + content
    }

    /// A constructed element with an indefinite length (BER), closed by end-of-contents.
    static func indefinite(_ identifier: UInt8, _ parts: [UInt8]...) -> [UInt8] {
        [identifier, 0x80] + parts.flatMap { $0 } + [0, 0]
    }

    /// `SEQUENCE`.
    static func sequence(_ parts: [UInt8]...) -> [UInt8] { element(0x30, parts.flatMap { $0 }) }
    /// `SET`.
    static func set(_ parts: [[UInt8]]) -> [UInt8] { element(0x31, parts.flatMap { $0 }) }
    /// `[number]` constructed (an explicit tag, or an implicit one on a constructed type).
    static func context(_ number: UInt8, _ parts: [UInt8]...) -> [UInt8] {
        element(0xA0 | number, parts.flatMap { $0 })
    }
    /// `OCTET STRING`.
    static func octetString(_ bytes: some Sequence<UInt8>) -> [UInt8] { element(0x04, Array(bytes)) }
    /// `UTF8String`.
    static func utf8(_ text: String) -> [UInt8] { element(0x0C, Array(text.utf8)) }
    /// `IA5String`.
    static func ia5(_ text: String) -> [UInt8] { element(0x16, Array(text.utf8)) }
    /// `NULL`.
    static let null: [UInt8] = [0x05, 0x00]

    /// `INTEGER`, in the fewest two's complement octets.
    static func integer(_ value: Int64) -> [UInt8] {
        var bytes = withUnsafeBytes(of: value.bigEndian, Array.init)
        while bytes.count > 1, (bytes[0] == 0 && bytes[1] & 0x80 == 0) || (bytes[0] == 0xFF && bytes[1] & 0x80 != 0) {
            bytes.removeFirst()
        }
        return element(0x02, bytes)
    }

    /// `OBJECT IDENTIFIER` from its dotted form.
    static func oid(_ dotted: String) -> [UInt8] {
        let arcs = dotted.split(separator: ".").compactMap { UInt64($0) }
        var content: [UInt8] = []
        for arc in [arcs[0] * 40 + arcs[1]] + arcs.dropFirst(2) {
            var octets = [UInt8(arc & 0x7F)]
            var rest = arc >> 7
            while rest > 0 {
                octets.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
                rest >>= 7
            }
            content += octets
        }
        return element(0x06, content)
    }

    /// `AlgorithmIdentifier` with NULL parameters, as receipts write them.
    static func algorithm(_ oid: String) -> [UInt8] { sequence(Self.oid(oid), null) }

    /// A `ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`.
    static func attribute(_ type: Int64, _ value: [UInt8]) -> [UInt8] {
        sequence(integer(type), integer(1), octetString(value))
    }
}

/// OIDs the tests write.
enum TestOID {
    /// `id-sha256`.
    static let sha256 = "2.16.840.1.101.3.4.2.1"
    /// `id-sha1`.
    static let sha1 = "1.3.14.3.2.26"
    /// `rsaEncryption`, the App Store's signature algorithm (the digest named apart).
    static let rsaEncryption = "1.2.840.113549.1.1.1"
    /// `sha256WithRSAEncryption`, Xcode's signature algorithm.
    static let sha256WithRSA = "1.2.840.113549.1.1.11"
}

/// The parts of a receipt's `SignedData`, to write back as DER after editing them.
struct TestSignedData {
    var digestAlgorithms: [String]
    var content: [UInt8]
    var certificates: [[UInt8]]?
    var signers: [Signer]

    /// One `SignerInfo`.
    struct Signer {
        var issuer: [UInt8]
        var serialNumber: [UInt8]
        var digestAlgorithm: String
        /// The signed attributes' elements (each an `Attribute` SEQUENCE); nil for none.
        var signedAttributes: [[UInt8]]?
        var signatureAlgorithm: String
        var signature: [UInt8]

        var der: [UInt8] {
            var parts = [
                TestDER.integer(1), TestDER.sequence(issuer, TestDER.element(0x02, serialNumber)),
                TestDER.algorithm(digestAlgorithm),
            ]
            if let signedAttributes { parts.append(TestDER.element(0xA0, signedAttributes.flatMap { $0 })) }
            parts += [TestDER.algorithm(signatureAlgorithm), TestDER.octetString(signature)]
            return TestDER.element(0x30, parts.flatMap { $0 })
        }
    }

    /// The parts of a receipt read by `AppReceiptDocument`.
    init(_ document: AppReceiptDocument) throws {
        let signedData = document.signedData
        digestAlgorithms = signedData.digestAlgorithms
        content = Array(signedData.content)
        certificates = signedData.certificates.map(Array.init)
        signers = try signedData.signerInfos.map { info in
            guard case .issuerAndSerialNumber(let issuer, let serialNumber) = info.identifier else {
                throw SubjectKeyIdentifierSigner()
            }
            return Signer(
                issuer: Array(issuer), serialNumber: Array(serialNumber), digestAlgorithm: info.digestAlgorithm,
                signedAttributes: nil, signatureAlgorithm: info.signatureAlgorithm, signature: Array(info.signature))
        }
    }

    /// A signer named by key identifier, which these tests do not write.
    struct SubjectKeyIdentifierSigner: Error {}

    /// The ContentInfo, in DER.
    var der: [UInt8] {
        var parts = [
            TestDER.integer(1), TestDER.set(digestAlgorithms.map(TestDER.algorithm)),
            TestDER.sequence(TestDER.oid("1.2.840.113549.1.7.1"), TestDER.context(0, TestDER.octetString(content))),
        ]
        if let certificates { parts.append(TestDER.element(0xA0, certificates.flatMap { $0 })) }
        parts.append(TestDER.set(signers.map(\.der)))
        return TestDER.sequence(
            TestDER.oid("1.2.840.113549.1.7.2"), TestDER.context(0, TestDER.element(0x30, parts.flatMap { $0 })))
    }

    /// The receipt read back.
    func document() throws -> AppReceiptDocument { try AppReceiptDocument.parse(der: Data(der)) }

    /// A signer identifier for `certificate`: its issuer's DER and serial number.
    static func identifier(of certificate: Certificate) throws -> (issuer: [UInt8], serialNumber: [UInt8]) {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate.issuer)
        return (serializer.serializedBytes, Array(certificate.serialNumber.bytes))
    }
}
