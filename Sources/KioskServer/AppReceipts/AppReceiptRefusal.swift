import Foundation
import KioskStore

/// Why ``AppReceiptVerifier`` refused an app receipt.
public enum AppReceiptRefusal: Error, Sendable, Hashable {
    /// The receipt could not be read.
    case malformed(AppReceiptParseError)
    /// The receipt has no signer, or its signer has an empty signature.
    case unsigned
    /// The receipt has more than one signer (Apple and Xcode sign with exactly one).
    case multipleSigners(Int)
    /// A certificate in the receipt is not valid DER X.509 (its position among the receipt's certificates).
    case certificateMalformed(index: Int)
    /// No certificate in the receipt is the one the signer names (issuer and serial number, or key identifier).
    case signerCertificateMissing
    /// The digest or signature algorithm, or the signer's key, is not one this verifier checks (RSA PKCS#1 v1.5
    /// with SHA-256 or SHA-1).
    case unsupportedAlgorithm(String)
    /// The signature does not match the receipt's content under the signer certificate's key (or the signed
    /// attributes do not carry the content's digest).
    case signatureInvalid
    /// The signer certificate does not chain to a trusted root at the receipt's creation date, the chain lacks
    /// Apple's receipt-signing extensions, or a local testing certificate was not valid then.
    case untrustedChain(String)
    /// The receipt is for another app (its bundle ID).
    case wrongBundle(String)

    /// Which check failed, machine-readable.
    public var reason: String {
        switch self {
        case .malformed: "malformed"
        case .unsigned: "unsigned"
        case .multipleSigners: "multiple_signers"
        case .certificateMalformed: "certificate_malformed"
        case .signerCertificateMissing: "signer_certificate_missing"
        case .unsupportedAlgorithm: "unsupported_algorithm"
        case .signatureInvalid: "signature_invalid"
        case .untrustedChain: "untrusted_chain"
        case .wrongBundle: "wrong_bundle"
        }
    }

    /// A sentence for people. Never contains the receipt itself.
    public var message: String {
        switch self {
        case .malformed(let error): error.message
        case .unsigned: "The receipt is not signed."
        case .multipleSigners(let count): "The receipt has \(count) signers; exactly one is accepted."
        case .certificateMalformed(let index): "Certificate \(index) of the receipt is not valid X.509."
        case .signerCertificateMissing: "The receipt does not carry the certificate of its signer."
        case .unsupportedAlgorithm(let detail): "The receipt is signed in a way this server does not check: \(detail)."
        case .signatureInvalid: "The receipt's signature does not match its content."
        case .untrustedChain(let detail): "The receipt's signer is not trusted (\(detail))."
        case .wrongBundle(let bundleID): "The receipt belongs to another app (\(bundleID.prefix(128)))."
        }
    }
}
