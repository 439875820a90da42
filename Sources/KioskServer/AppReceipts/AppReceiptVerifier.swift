import Crypto
import Foundation
import KioskStore
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509
import _CryptoExtras

/// Verifies an app receipt locally, with no call to Apple's deprecated `verifyReceipt`:
///
/// 1. the receipt reads (``AppReceiptDocument``, BER or DER) and has exactly one signer, whose certificate it
///    carries (found by issuer and serial number);
/// 2. the signature is RSA PKCS#1 v1.5 with SHA-256 or SHA-1 (older receipts) over the receipt content, or, when
///    the signer signed attributes, over their DER `SET` after checking their `messageDigest` against the
///    content's digest (RFC 5652 §5.4);
/// 3. the signer certificate chains, with swift-certificates' `Verifier` (RFC 5280 rules), to one of
///    ``trustedRoots`` — never to a root the receipt brings along — at the receipt's creation date (attribute 12,
///    which the signature covers), since every real receipt's leaf has expired since; the chain is leaf,
///    intermediate and root, the leaf carrying Apple's receipt-signing extension 1.2.840.113635.100.6.11.1 and the
///    intermediate 1.2.840.113635.100.6.2.1 (the App Store's production receipts do);
/// 4. the bundle ID is ``bundleID``.
///
/// An Xcode StoreKit-testing receipt is signed by a self-signed `CN=StoreKit` certificate. It verifies only when
/// that very certificate is passed as ``localTestingRoot`` (and is valid at the receipt's creation date); it is
/// refused otherwise.
///
/// The signer check is written here, with the receipt reader of KioskStore and `_RSA.Signing.PublicKey` from
/// `_CryptoExtras`, rather than with swift-certificates' CMS support: that is `@_spi(CMS)` (no stable API), reads
/// DER only (Xcode receipts are BER), and has no SHA-1 or local-testing path.
///
/// ```swift
/// let verifier = try AppReceiptVerifier(bundleID: "com.example.app")
/// let receipt = try await verifier.verify(base64: body.receiptData)   // throws AppReceiptRefusal
/// for transaction in receipt.contents.storeTransactions { … }
/// ```
public struct AppReceiptVerifier: Sendable {
    /// The roots an App Store receipt's chain must end at (Apple Root CA by default).
    public let trustedRoots: [Certificate]
    /// A certificate trusted to sign receipts itself, for Xcode's StoreKit-testing receipts; nil in production.
    public let localTestingRoot: Certificate?
    /// The app whose receipts are accepted.
    public let bundleID: String

    /// Creates a verifier trusting `trustedRoots`, and `localTestingRoot` for local testing.
    public init(bundleID: String, trustedRoots: [Certificate], localTestingRoot: Certificate? = nil) {
        self.bundleID = bundleID
        self.trustedRoots = trustedRoots
        self.localTestingRoot = localTestingRoot
    }

    /// Creates a verifier trusting Apple Root CA, and `localTestingRoot` for local testing.
    public init(bundleID: String, localTestingRoot: Certificate? = nil) throws {
        self.init(
            bundleID: bundleID, trustedRoots: [try AppleRootCertificates.appleIncRootCA()],
            localTestingRoot: localTestingRoot)
    }

    /// Reads and verifies a base64 receipt.
    public func verify(base64: String) async throws(AppReceiptRefusal) -> VerifiedAppReceipt {
        let document: AppReceiptDocument
        do {
            document = try AppReceiptDocument.parse(base64: base64)
        } catch {
            throw .malformed(error)
        }
        return try await verify(document)
    }

    /// Verifies a receipt already read.
    public func verify(_ document: AppReceiptDocument) async throws(AppReceiptRefusal) -> VerifiedAppReceipt {
        let signedData = document.signedData
        guard let signer = signedData.signerInfos.first, !signer.signature.isEmpty else { throw .unsigned }
        guard signedData.signerInfos.count == 1 else { throw .multipleSigners(signedData.signerInfos.count) }
        var certificates: [Certificate] = []
        for (index, der) in signedData.certificates.enumerated() {
            guard let certificate = try? Certificate(derEncoded: Array(der)) else {
                throw .certificateMalformed(index: index)
            }
            certificates.append(certificate)
        }
        guard let signerCertificate = certificates.first(where: { Self.names($0, signer.identifier) }) else {
            throw .signerCertificateMissing
        }
        try Self.checkSignature(signer, content: signedData.content, certificate: signerCertificate)
        let anchor = try await trust(
            signerCertificate, intermediates: certificates.filter { $0 != signerCertificate },
            at: document.contents.creationDate)
        guard document.contents.bundleID == bundleID else { throw .wrongBundle(document.contents.bundleID) }
        return VerifiedAppReceipt(contents: document.contents, anchor: anchor)
    }

    /// Whether `certificate` is the one a signer identifier names.
    private static func names(_ certificate: Certificate, _ identifier: AppReceiptSignerInfo.Identifier) -> Bool {
        switch identifier {
        case .issuerAndSerialNumber(let issuer, let serialNumber):
            guard let issuer = try? DistinguishedName(derEncoded: DER.parse(Array(issuer))) else { return false }
            return certificate.issuer == issuer && certificate.serialNumber == .init(bytes: Array(serialNumber))
        case .subjectKeyIdentifier(let keyIdentifier):
            let ownIdentifier = try? certificate.extensions.subjectKeyIdentifier?.keyIdentifier
            return ownIdentifier.map { Data($0) == keyIdentifier } ?? false
        }
    }

    /// Checks the signer's RSA PKCS#1 v1.5 signature over the content or its signed attributes.
    private static func checkSignature(
        _ signer: AppReceiptSignerInfo, content: Data, certificate: Certificate
    ) throws(AppReceiptRefusal) {
        guard let digest = ReceiptDigest(oid: signer.digestAlgorithm) else {
            throw .unsupportedAlgorithm("digest algorithm \(signer.digestAlgorithm)")
        }
        guard digest.acceptsSignatureAlgorithm(signer.signatureAlgorithm) else {
            throw .unsupportedAlgorithm("signature algorithm \(signer.signatureAlgorithm) with \(digest)")
        }
        guard let key = _RSA.Signing.PublicKey(certificate.publicKey) else {
            throw .unsupportedAlgorithm("the signer's key is not RSA")
        }
        var signedBytes = content
        if let attributes = signer.signedAttributes {
            guard attributes.messageDigest == digest.hash(content),
                attributes.contentType == AppReceiptSignedData.dataOID
            else { throw .signatureInvalid }
            signedBytes = attributes.der
        }
        let signature = _RSA.Signing.RSASignature(rawRepresentation: signer.signature)
        guard digest.isValid(signature, for: signedBytes, key: key) else { throw .signatureInvalid }
    }

    /// Finds what the signer certificate is trusted by, at the receipt's creation date.
    private func trust(
        _ signerCertificate: Certificate, intermediates: [Certificate], at creationDate: Date
    ) async throws(AppReceiptRefusal) -> VerifiedAppReceipt.Anchor {
        if let localTestingRoot, signerCertificate == localTestingRoot {
            guard localTestingRoot.notValidBefore <= creationDate, creationDate <= localTestingRoot.notValidAfter
            else { throw .untrustedChain("the local testing certificate was not valid when the receipt was made") }
            return .localTesting
        }
        var verifier = Verifier(rootCertificates: CertificateStore(trustedRoots)) {
            RFC5280Policy(fixedExpiryValidationTime: creationDate)
            AppleSigningChainPolicy()
        }
        switch await verifier.validate(leaf: signerCertificate, intermediates: CertificateStore(intermediates)) {
        case .validCertificate:
            return .trustedRoot
        case .couldNotValidate(let failures):
            throw .untrustedChain(failures.first.map { "\($0.policyFailureReason)" } ?? "no trusted root issued it")
        }
    }
}

/// A receipt that ``AppReceiptVerifier`` verified.
public struct VerifiedAppReceipt: Sendable, Hashable {
    /// What vouched for the receipt.
    public enum Anchor: Sendable, Hashable {
        /// A chain to one of the verifier's trusted roots (Apple Root CA): a receipt from the App Store.
        case trustedRoot
        /// The verifier's local testing certificate signed it: an Xcode StoreKit-testing receipt.
        case localTesting
    }

    /// The receipt's contents, now authenticated.
    public var contents: AppReceiptContents
    /// What vouched for it.
    public var anchor: Anchor
}

/// The digest algorithms receipts are signed with: SHA-256, and SHA-1 in older receipts.
private enum ReceiptDigest: CustomStringConvertible {
    case sha256
    case sha1

    /// Reads a digest algorithm OID; nil for any other algorithm.
    init?(oid: String) {
        switch oid {
        case "2.16.840.1.101.3.4.2.1": self = .sha256
        case "1.3.14.3.2.26": self = .sha1
        default: return nil
        }
    }

    /// The algorithm's name, for refusals.
    var description: String {
        switch self {
        case .sha256: "SHA-256"
        case .sha1: "SHA-1"
        }
    }

    /// Whether a SignerInfo's signature algorithm goes with this digest: `rsaEncryption` (the digest named apart,
    /// as the App Store writes it), or the RSA algorithm for this very digest (as Xcode writes it).
    func acceptsSignatureAlgorithm(_ oid: String) -> Bool {
        switch (self, oid) {
        case (_, "1.2.840.113549.1.1.1"), (.sha256, "1.2.840.113549.1.1.11"), (.sha1, "1.2.840.113549.1.1.5"): true
        default: false
        }
    }

    /// The digest of `data`.
    func hash(_ data: Data) -> Data {
        switch self {
        case .sha256: Data(SHA256.hash(data: data))
        case .sha1: Data(Insecure.SHA1.hash(data: data))
        }
    }

    /// Whether `signature` is `key`'s RSA PKCS#1 v1.5 signature of `data`'s digest.
    func isValid(_ signature: _RSA.Signing.RSASignature, for data: Data, key: _RSA.Signing.PublicKey) -> Bool {
        switch self {
        case .sha256: key.isValidSignature(signature, for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5)
        case .sha1: key.isValidSignature(signature, for: Insecure.SHA1.hash(data: data), padding: .insecurePKCS1v1_5)
        }
    }
}
