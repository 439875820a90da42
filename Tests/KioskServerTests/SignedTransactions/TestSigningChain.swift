import Crypto
import Foundation
import KioskStore
import SwiftASN1
import X509

@testable import KioskServer

/// A root → intermediate → leaf P-256 chain made with swift-certificates, good or deliberately bad, and a signer
/// of App Store style JWS with it.
struct TestSigningChain {
    let root: Certificate
    let intermediate: Certificate
    let leaf: Certificate
    let leafKey: P256.Signing.PrivateKey

    /// What to get wrong.
    struct Flaws {
        var intermediateOID: ASN1ObjectIdentifier? = SignedDataVerifier.intermediateOID
        var leafOID: ASN1ObjectIdentifier? = SignedDataVerifier.leafOID
        var leafNotAfter: Date? = nil
    }

    static let bundleID = "com.example.kiosk"
    /// 2026-11-01T00:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_793_491_200)

    init(flaws: Flaws = Flaws(), validFrom: Date = TestSigningChain.now.addingTimeInterval(-365 * 86_400)) throws {
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("Test Root \(UUID().uuidString)") }
        let intermediateName = try DistinguishedName { CommonName("Test Intermediate") }
        let leafName = try DistinguishedName { CommonName("Test Leaf") }
        let end = validFrom.addingTimeInterval(20 * 365 * 86_400)
        root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey), notValidBefore: validFrom,
            notValidAfter: end, issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(rootKey))
        intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey), notValidBefore: validFrom,
            notValidAfter: end, issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
                if let oid = flaws.intermediateOID {
                    Certificate.Extension(oid: oid, critical: false, value: [0x05, 0x00])
                }
            },
            issuerPrivateKey: .init(rootKey))
        leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey), notValidBefore: validFrom,
            notValidAfter: flaws.leafNotAfter ?? end, issuer: intermediateName, subject: leafName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                if let oid = flaws.leafOID { Certificate.Extension(oid: oid, critical: false, value: [0x05, 0x00]) }
            },
            issuerPrivateKey: .init(intermediateKey))
        self.leafKey = leafKey
    }

    /// The full chain, leaf first.
    var x5c: [Certificate] { [leaf, intermediate, root] }

    /// A verifier trusting this chain's root.
    func verifier(environments: Set<String> = ["Sandbox"]) -> SignedDataVerifier {
        SignedDataVerifier(trustedRoots: [root], bundleID: Self.bundleID, environments: environments)
    }

    /// `payload` signed as the App Store signs, announcing `chain` (default: the full chain).
    func sign(_ payload: some Encodable, chain: [Certificate]? = nil) throws -> String {
        try JWSCompact.sign(payload: try AppleJSON.encoder().encode(payload), key: leafKey, chain: chain ?? x5c)
    }

    /// A transaction payload.
    static func transaction(
        id: String = "2000000000000001", original: String? = nil, productID: String = "com.example.kiosk.book",
        purchase: Date = now.addingTimeInterval(-3600), expires: Date? = nil, signed: Date = now,
        revoked: Date? = nil, bundleID: String = bundleID, environment: String = "Sandbox"
    ) -> JWSTransaction {
        JWSTransaction(
            transactionId: id, originalTransactionId: original ?? id, bundleId: bundleID, productId: productID,
            purchaseDate: purchase, expiresDate: expires, quantity: 1,
            type: expires == nil ? "Non-Consumable" : "Auto-Renewable Subscription",
            signedDate: signed, revocationDate: revoked, environment: environment)
    }
}
