import Crypto
import Foundation
import KioskStore
import Testing
import X509
import _CryptoExtras

@testable import KioskServer

/// The app receipt verifier against the real receipts, edited and forged ones: signature, signer certificate,
/// chain at the receipt's creation date to a configured root only, Xcode receipts only with a local testing root.
@Suite("AppReceipt verifier")
struct AppReceiptVerifierTests {
    static let productionBundle = "org.getpure.pure-iphone"
    static let xcodeBundle = "com.example.naturelab.backyardbirds.example"

    /// The production receipt, read.
    func production() throws -> AppReceiptDocument {
        try AppReceiptDocument.parse(base64: AppReceiptFixture.production.base64())
    }

    /// A verifier for the production receipt's app trusting Apple Root CA (the default).
    func appleVerifier(bundleID: String = productionBundle) throws -> AppReceiptVerifier {
        try AppReceiptVerifier(bundleID: bundleID)
    }

    /// Why `verifier` refuses `document`; nil if it accepts it.
    func refusal(_ verifier: AppReceiptVerifier, _ document: AppReceiptDocument) async -> AppReceiptRefusal? {
        do throws(AppReceiptRefusal) {
            _ = try await verifier.verify(document)
            return nil
        } catch {
            return error
        }
    }

    @Test("The production receipt verifies against Apple Root CA at its creation date")
    func productionVerifies() async throws {
        #expect(
            try AppleRootCertificates.appleIncRootCA() == AppReceiptFixture.certificate("AppleIncRootCertificate.pem"))
        let verified = try await appleVerifier().verify(base64: AppReceiptFixture.production.base64())
        #expect(verified.anchor == .trustedRoot)
        #expect(verified.contents.bundleID == Self.productionBundle)
        #expect(verified.contents.inApp.count == 4)
    }

    @Test("The production chain carries Apple's receipt-signing extensions (leaf 6.11.1, intermediate 6.2.1)")
    func appleMarkers() throws {
        let certificates = try production().signedData.certificates.map { try Certificate(derEncoded: Array($0)) }
        try #require(certificates.count == 3)
        #expect(certificates[0].extensions[oid: SignedDataVerifier.leafOID] != nil)
        #expect(certificates[1].extensions[oid: SignedDataVerifier.intermediateOID] != nil)
        #expect(certificates[0].notValidAfter < Date())
    }

    @Test(
        "The production receipt is refused against another root",
        arguments: ["AppleRootCA-G3.pem", "StoreKitTestCertificate.pem"])
    func otherRoot(root: String) async throws {
        let certificate = try AppReceiptFixture.certificate(root)
        let g3 = try AppReceiptFixture.certificate("AppleRootCA-G3.pem")
        for verifier in [
            AppReceiptVerifier(bundleID: Self.productionBundle, trustedRoots: [certificate]),
            AppReceiptVerifier(bundleID: Self.productionBundle, trustedRoots: [g3], localTestingRoot: certificate),
        ] {
            #expect(await refusal(verifier, try production())?.reason == "untrusted_chain")
        }
    }

    @Test("A receipt for another app is refused")
    func otherApp() async throws {
        #expect(
            await refusal(try appleVerifier(bundleID: "com.example.other"), try production())
                == .wrongBundle(Self.productionBundle))
    }

    @Test("Rewritten from its parts the receipt is byte for byte the same, and one changed content byte breaks it")
    func changedContent() async throws {
        var parts = try TestSignedData(production())
        #expect(Data(parts.der) == (try AppReceiptFixture.production.der()))
        let index = try #require(parts.content.firstRange(of: Array(Self.productionBundle.utf8))?.lowerBound)
        parts.content[index] = UInt8(ascii: "O")
        let edited = try parts.document()
        #expect(edited.contents.bundleID == "O" + Self.productionBundle.dropFirst())
        #expect(await refusal(try appleVerifier(bundleID: edited.contents.bundleID), edited) == .signatureInvalid)
    }

    @Test("A receipt without a signer, with an empty or altered signature, or with two signers is refused")
    func signatureRemoved() async throws {
        let verifier = try appleVerifier()
        var parts = try TestSignedData(production())
        let signer = parts.signers[0]
        parts.signers = []
        #expect(await refusal(verifier, try parts.document()) == .unsigned)
        parts.signers = [signer]
        parts.signers[0].signature = []
        #expect(await refusal(verifier, try parts.document()) == .unsigned)
        parts.signers[0].signature = signer.signature
        parts.signers[0].signature[100] ^= 0x01
        #expect(await refusal(verifier, try parts.document()) == .signatureInvalid)
        parts.signers = [signer, signer]
        #expect(await refusal(verifier, try parts.document()) == .multipleSigners(2))
    }

    @Test("A receipt without its certificates, or only its leaf, or with a broken one is refused")
    func certificatesRemoved() async throws {
        let verifier = try appleVerifier()
        var parts = try TestSignedData(production())
        let certificates = try #require(parts.certificates)
        parts.certificates = nil
        #expect(await refusal(verifier, try parts.document()) == .signerCertificateMissing)
        parts.certificates = [certificates[1], certificates[2]]
        #expect(await refusal(verifier, try parts.document()) == .signerCertificateMissing)
        parts.certificates = [certificates[0]]
        #expect(await refusal(verifier, try parts.document())?.reason == "untrusted_chain")
        parts.certificates = certificates + [[0x30, 0x00]]
        #expect(await refusal(verifier, try parts.document()) == .certificateMalformed(index: 3))
    }

    /// A self-made RSA key and self-signed certificate that re-sign the real receipt content.
    struct Forger {
        let key: _RSA.Signing.PrivateKey
        let certificate: Certificate

        init() throws {
            key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let name = try DistinguishedName {
                CommonName("Mac App Store and iTunes Store Receipt Signing")
                OrganizationName("Apple Inc.")
            }
            certificate = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
                notValidBefore: Date(timeIntervalSince1970: 1_577_836_800),
                notValidAfter: Date(timeIntervalSince1970: 2_208_988_800), issuer: name, subject: name,
                signatureAlgorithm: .sha256WithRSAEncryption,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                    Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
                    Certificate.Extension(oid: SignedDataVerifier.leafOID, critical: false, value: [0x05, 0x00])
                },
                issuerPrivateKey: .init(key))
        }

        /// `content` signed with this key: directly, or through signed attributes carrying `attributeDigest` (the
        /// content's own digest by default).
        func sign(
            _ content: [UInt8], digest: String = TestOID.sha256, signatureAlgorithm: String = TestOID.rsaEncryption,
            signedAttributes: Bool = false, attributeDigest: [UInt8]? = nil
        ) throws -> TestSignedData {
            var parts = try TestSignedData(try AppReceiptDocument.parse(base64: AppReceiptFixture.production.base64()))
            let hash = { (bytes: [UInt8]) -> [UInt8] in
                digest == TestOID.sha1 ? Array(Insecure.SHA1.hash(data: bytes)) : Array(SHA256.hash(data: bytes))
            }
            var attributes: [[UInt8]]?
            var signed = content
            if signedAttributes {
                attributes = [
                    TestDER.sequence(
                        TestDER.oid(AppReceiptSignerInfo.SignedAttributes.contentTypeOID),
                        TestDER.set([TestDER.oid(AppReceiptSignedData.dataOID)])),
                    TestDER.sequence(
                        TestDER.oid(AppReceiptSignerInfo.SignedAttributes.messageDigestOID),
                        TestDER.set([TestDER.octetString(attributeDigest ?? hash(content))])),
                ]
                signed = TestDER.set(attributes ?? [])
            }
            let signature =
                digest == TestOID.sha1
                ? try key.signature(for: Insecure.SHA1.hash(data: signed), padding: .insecurePKCS1v1_5)
                : try key.signature(for: SHA256.hash(data: signed), padding: .insecurePKCS1v1_5)
            let (issuer, serialNumber) = try TestSignedData.identifier(of: certificate)
            parts.digestAlgorithms = [digest]
            parts.content = content
            parts.certificates = [Array(try certificate.serializeAsDER())]
            parts.signers = [
                .init(
                    issuer: issuer, serialNumber: serialNumber, digestAlgorithm: digest,
                    signedAttributes: attributes, signatureAlgorithm: signatureAlgorithm,
                    signature: Array(signature.rawRepresentation))
            ]
            return parts
        }
    }

    @Test("The real content re-signed by a self-made key and certificate is refused, whichever root is trusted")
    func forged() async throws {
        let forger = try Forger()
        let content = Array(try production().signedData.content)
        let forged = try forger.sign(content).document()
        #expect(await refusal(try appleVerifier(), forged)?.reason == "untrusted_chain")
        let trustingForger = AppReceiptVerifier(bundleID: Self.productionBundle, trustedRoots: [forger.certificate])
        #expect(await refusal(trustingForger, forged)?.reason == "untrusted_chain")
        // The forgery is otherwise sound: its own certificate, as a local testing root, accepts it.
        let local = try AppReceiptVerifier(bundleID: Self.productionBundle, localTestingRoot: forger.certificate)
        #expect(try await local.verify(forged).anchor == .localTesting)
    }

    @Test("Signed attributes and SHA-1 signatures verify; a wrong message digest or mismatched algorithm does not")
    func signedAttributesAndSHA1() async throws {
        let forger = try Forger()
        let content = Array(try production().signedData.content)
        let verifier = try AppReceiptVerifier(bundleID: Self.productionBundle, localTestingRoot: forger.certificate)
        for (digest, algorithm) in [(TestOID.sha256, TestOID.sha256WithRSA), (TestOID.sha1, TestOID.rsaEncryption)] {
            let document = try forger.sign(
                content, digest: digest, signatureAlgorithm: algorithm, signedAttributes: true
            )
            .document()
            #expect(document.signedData.signerInfos.first?.signedAttributes?.messageDigest != nil)
            #expect(await refusal(verifier, document) == nil)
            #expect(await refusal(verifier, try forger.sign(content, digest: digest).document()) == nil)
            var altered = try forger.sign(
                content, digest: digest, signatureAlgorithm: algorithm, signedAttributes: true)
            altered.signers[0].signature[7] ^= 0x80
            #expect(await refusal(verifier, try altered.document()) == .signatureInvalid)
        }
        let wrongDigest = try forger.sign(
            content, signedAttributes: true, attributeDigest: Array(repeating: 0, count: 32))
        #expect(await refusal(verifier, try wrongDigest.document()) == .signatureInvalid)
        let mismatched = try forger.sign(content, digest: TestOID.sha1, signatureAlgorithm: TestOID.sha256WithRSA)
        #expect(await refusal(verifier, try mismatched.document())?.reason == "unsupported_algorithm")
        let md5 = try forger.sign(content, digest: "1.2.840.113549.2.5")
        #expect(await refusal(verifier, try md5.document())?.reason == "unsupported_algorithm")
    }

    @Test(
        "Xcode receipts are refused by default and accepted with the StoreKit certificate as local testing root",
        arguments: [AppReceiptFixture.xcodeWithPurchases, .xcodeEmpty, .xcodeWithTransaction])
    func xcode(fixture: AppReceiptFixture) async throws {
        let document = try AppReceiptDocument.parse(base64: fixture.base64())
        #expect(await refusal(try appleVerifier(bundleID: Self.xcodeBundle), document)?.reason == "untrusted_chain")
        let storeKit = try AppReceiptFixture.certificate("StoreKitTestCertificate.pem")
        let verifier = try AppReceiptVerifier(bundleID: Self.xcodeBundle, localTestingRoot: storeKit)
        let verified = try await verifier.verify(document)
        #expect(verified.anchor == .localTesting)
        #expect(verified.contents.receiptType == "Xcode")
        let asRoot = AppReceiptVerifier(bundleID: Self.xcodeBundle, trustedRoots: [storeKit])
        #expect(await refusal(asRoot, document)?.reason == "untrusted_chain")
    }
}
