import Foundation

/// The PKCS#7 / CMS `SignedData` (RFC 5652 §5) that wraps an app receipt, read structurally: nothing here is
/// verified (KioskServer's `AppReceiptVerifier` does that).
public struct AppReceiptSignedData: Sendable, Hashable {
    /// `id-signedData`, the ContentInfo type of a receipt.
    public static let signedDataOID = "1.2.840.113549.1.7.2"
    /// `id-data`, the type of the encapsulated content (the receipt payload).
    public static let dataOID = "1.2.840.113549.1.7.1"

    /// The `SignedData` version (1 for every Apple receipt).
    public var version: Int64
    /// The digest algorithms the signers use, as dotted OIDs.
    public var digestAlgorithms: [String]
    /// The encapsulated content (`eContent`): the receipt payload's bytes, the parts of a BER constructed
    /// `OCTET STRING` concatenated.
    public var content: Data
    /// The certificates of `certificates [0]`, each exactly as it appears in the receipt (Apple's and Xcode's
    /// receipts carry DER certificates, even inside an otherwise BER receipt). Other certificate choices
    /// (attribute certificates, `[n]`-tagged) are left out.
    public var certificates: [Data]
    /// The signers (exactly one in a receipt Apple or Xcode signed).
    public var signerInfos: [AppReceiptSignerInfo]

    /// Reads a ContentInfo holding a `SignedData` with `id-data` content.
    init(_ contentInfo: ASN1Node) throws(AppReceiptParseError) {
        var outer = try contentInfo.elements(.sequence, "the ContentInfo")
        let contentType = try outer.next("content type").objectIdentifier("the content type")
        guard contentType == Self.signedDataOID else {
            throw .unexpectedStructure("the content type is \(contentType), not signedData")
        }
        var explicit = try outer.next("content").elements(.context(0), "the ContentInfo content")
        try outer.finish()
        var signedData = try explicit.next("SignedData").elements(.sequence, "the SignedData")
        try explicit.finish()

        version = try signedData.next("version").integer("the SignedData version")
        var algorithms = try signedData.next("digestAlgorithms").elements(.set, "the digest algorithms")
        digestAlgorithms = []
        while !algorithms.nodes.isEmpty {
            digestAlgorithms.append(try Self.algorithm(algorithms.next("algorithm"), "a digest algorithm"))
        }
        content = try Self.encapsulatedContent(signedData.next("encapContentInfo"))
        certificates = []
        if let set = signedData.optional(.context(0)) {
            certificates = try set.elements(.context(0), "the certificates").nodes
                .filter { $0.tag == .sequence }.map { Data($0.encoded) }
        }
        _ = signedData.optional(.context(1))
        var signers = try signedData.next("signerInfos").elements(.set, "the signer infos")
        try signedData.finish()
        signerInfos = []
        while !signers.nodes.isEmpty { signerInfos.append(try AppReceiptSignerInfo(signers.next("signer info"))) }
    }

    /// The content of `EncapsulatedContentInfo ::= SEQUENCE { eContentType, eContent [0] EXPLICIT OCTET STRING }`,
    /// which must be `id-data` and present (a receipt is never detached).
    private static func encapsulatedContent(_ node: ASN1Node) throws(AppReceiptParseError) -> Data {
        var info = try node.elements(.sequence, "the encapsulated content info")
        let type = try info.next("content type").objectIdentifier("the encapsulated content type")
        guard type == dataOID else { throw .unexpectedStructure("the encapsulated content type is \(type), not data") }
        var explicit = try info.next("content").elements(.context(0), "the encapsulated content")
        try info.finish()
        let content = try explicit.next("OCTET STRING").stringBytes(.octetString, "the encapsulated content")
        try explicit.finish()
        return Data(content)
    }

    /// The OID of an `AlgorithmIdentifier ::= SEQUENCE { algorithm OID, parameters ANY OPTIONAL }`.
    static func algorithm(_ node: ASN1Node, _ what: String) throws(AppReceiptParseError) -> String {
        var identifier = try node.elements(.sequence, what)
        let oid = try identifier.next("algorithm").objectIdentifier(what)
        _ = identifier.nextIfPresent()
        try identifier.finish()
        return oid
    }
}

/// One `SignerInfo` (RFC 5652 §5.3) of a receipt's `SignedData`.
public struct AppReceiptSignerInfo: Sendable, Hashable {
    /// How a signer names its certificate (`sid`).
    public enum Identifier: Sendable, Hashable {
        /// `IssuerAndSerialNumber`: the certificate issuer's `Name` (re-encoded as DER) and the serial number's
        /// `INTEGER` content octets.
        case issuerAndSerialNumber(issuer: Data, serialNumber: Data)
        /// `[0] SubjectKeyIdentifier`: the key identifier's octets.
        case subjectKeyIdentifier(Data)
    }

    /// The signed attributes (`signedAttrs [0] IMPLICIT SET OF Attribute`), present in CMS signatures that sign
    /// attributes instead of the content itself (Apple's receipts so far have none).
    public struct SignedAttributes: Sendable, Hashable {
        /// `id-messageDigest`.
        public static let messageDigestOID = "1.2.840.113549.1.9.4"
        /// `id-contentType`.
        public static let contentTypeOID = "1.2.840.113549.1.9.3"

        /// The attributes exactly as received, with their `[0]` tag.
        public var raw: Data
        /// What the signature covers (RFC 5652 §5.4): the attributes re-encoded as DER under the `SET OF` tag
        /// (`0x31`).
        public var der: Data
        /// The `messageDigest` attribute's value: the digest of the content; nil if absent.
        public var messageDigest: Data?
        /// The `contentType` attribute's value as a dotted OID; nil if absent.
        public var contentType: String?
    }

    /// The `SignerInfo` version (1 with an issuer and serial number, 3 with a subject key identifier).
    public var version: Int64
    /// The signer's certificate, named.
    public var identifier: Identifier
    /// The digest algorithm, as a dotted OID (`2.16.840.1.101.3.4.2.1` for SHA-256, `1.3.14.3.2.26` for SHA-1).
    public var digestAlgorithm: String
    /// The signed attributes, if any.
    public var signedAttributes: SignedAttributes?
    /// The signature algorithm, as a dotted OID (`rsaEncryption` or `sha256WithRSAEncryption` in receipts).
    public var signatureAlgorithm: String
    /// The signature octets.
    public var signature: Data

    /// Reads one `SignerInfo`.
    init(_ node: ASN1Node) throws(AppReceiptParseError) {
        var info = try node.elements(.sequence, "a signer info")
        version = try info.next("version").integer("the signer info version")
        identifier = try Self.identifier(info.next("sid"))
        digestAlgorithm = try AppReceiptSignedData.algorithm(info.next("digestAlgorithm"), "the digest algorithm")
        signedAttributes = try info.optional(.context(0)).map(Self.signedAttributes)
        signatureAlgorithm = try AppReceiptSignedData.algorithm(
            info.next("signatureAlgorithm"), "the signature algorithm")
        signature = Data(try info.next("signature").stringBytes(.octetString, "the signature"))
        _ = info.optional(.context(1))
        try info.finish()
    }

    /// Reads `SignerIdentifier ::= CHOICE { IssuerAndSerialNumber, [0] SubjectKeyIdentifier }`.
    private static func identifier(_ node: ASN1Node) throws(AppReceiptParseError) -> Identifier {
        if node.tag == .context(0) {
            guard !node.isConstructed else { throw .unexpectedStructure("the subject key identifier is constructed") }
            return .subjectKeyIdentifier(Data(node.content))
        }
        var sid = try node.elements(.sequence, "the signer identifier")
        let issuer = try sid.next("issuer").expecting(.sequence, "the signer's issuer").derEncoding()
        let serial = try sid.next("serialNumber").integerBytes("the signer's serial number")
        try sid.finish()
        return .issuerAndSerialNumber(issuer: Data(issuer), serialNumber: Data(serial))
    }

    /// Reads the signed attributes and the two that RFC 5652 §5.3 requires.
    private static func signedAttributes(_ node: ASN1Node) throws(AppReceiptParseError) -> SignedAttributes {
        var attributes = try node.elements(.context(0), "the signed attributes")
        var found = SignedAttributes(
            raw: Data(node.encoded), der: Data(try node.derEncoding(as: .set)), messageDigest: nil, contentType: nil)
        while !attributes.nodes.isEmpty {
            var attribute = try attributes.next("attribute").elements(.sequence, "a signed attribute")
            let type = try attribute.next("type").objectIdentifier("a signed attribute's type")
            var values = try attribute.next("values").elements(.set, "a signed attribute's values")
            try attribute.finish()
            switch type {
            case SignedAttributes.messageDigestOID:
                guard found.messageDigest == nil else { throw .unexpectedStructure("two message digests are signed") }
                found.messageDigest = Data(try values.next("value").stringBytes(.octetString, "the message digest"))
                try values.finish()
            case SignedAttributes.contentTypeOID:
                guard found.contentType == nil else { throw .unexpectedStructure("two content types are signed") }
                found.contentType = try values.next("value").objectIdentifier("the content type attribute")
                try values.finish()
            default:
                continue
            }
        }
        return found
    }
}
