import Crypto
import Foundation
import KioskStore
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Verifies App Store signed data (StoreKit 2 transactions, renewal information and Server Notifications V2)
/// locally, with no call to Apple:
///
/// 1. a compact JWS whose header says `ES256` (`none`, `HS256` and every other algorithm are refused);
/// 2. an `x5c` chain of exactly three certificates, the intermediate carrying Apple's OID
///    1.2.840.113635.100.6.2.1 and the leaf 1.2.840.113635.100.6.11.1, each valid at the payload's `signedDate`,
///    validated with swift-certificates (RFC 5280 rules) to one of ``trustedRoots``;
/// 3. the ES256 signature over `header.payload` under the leaf's P-256 key;
/// 4. the bundle ID and environment the server accepts.
public struct SignedDataVerifier: Sendable {
    /// The extension Apple puts in the intermediate (Apple Worldwide Developer Relations CA - G6).
    public static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
    /// The extension Apple puts in the leaf that signs App Store data.
    public static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]

    /// The roots a chain must end at (Apple Root CA - G3 by default).
    public let trustedRoots: [Certificate]
    /// The app whose data is accepted.
    public let bundleID: String
    /// The environments accepted (`Production`, `Sandbox`).
    public let environments: Set<String>

    /// Creates a verifier.
    public init(trustedRoots: [Certificate], bundleID: String, environments: Set<String>) {
        self.trustedRoots = trustedRoots
        self.bundleID = bundleID
        self.environments = environments
    }

    /// Verifies a signed transaction (`Transaction.jwsRepresentation`, or a notification's
    /// `signedTransactionInfo`).
    public func verifyTransaction(_ jws: String) async throws(SignedDataRefusal) -> JWSTransaction {
        let transaction: JWSTransaction = try await verify(jws)
        try checkApp(bundleID: transaction.bundleId, environment: transaction.environment)
        return transaction
    }

    /// Verifies a subscription's signed renewal information.
    public func verifyRenewalInfo(_ jws: String) async throws(SignedDataRefusal) -> JWSRenewalInfo {
        let info: JWSRenewalInfo = try await verify(jws)
        try checkApp(bundleID: bundleID, environment: info.environment)
        return info
    }

    /// Verifies a notification's `signedPayload` (its transaction and renewal information are verified apart).
    public func verifyNotification(_ jws: String) async throws(SignedDataRefusal) -> NotificationPayload {
        let notification: NotificationPayload = try await verify(jws)
        if let data = notification.data { try checkApp(bundleID: data.bundleId, environment: data.environment) }
        return notification
    }

    private func checkApp(bundleID: String, environment: String) throws(SignedDataRefusal) {
        guard bundleID == self.bundleID else { throw .bundleMismatch(bundleID) }
        guard environments.contains(environment) else { throw .environmentMismatch(environment) }
    }

    /// Checks the JWS's algorithm, chain and signature, and decodes its payload.
    func verify<Payload: AppleSignedPayload>(_ jws: String) async throws(SignedDataRefusal) -> Payload {
        guard let parsed = JWSCompact(jws) else { throw .malformed("it is not header.payload.signature in base64url") }
        guard parsed.header.alg == "ES256" else { throw .unsupportedAlgorithm(parsed.header.alg) }
        let x5c = parsed.header.x5c ?? []
        guard x5c.count == 3 else { throw .chainLength(x5c.count) }
        let positions = ["leaf", "intermediate", "root"]
        var chain: [Certificate] = []
        for (position, encoded) in zip(positions, x5c) {
            guard let der = Data(base64Encoded: encoded), let certificate = try? Certificate(derEncoded: Array(der))
            else { throw .certificateMalformed(position: position) }
            chain.append(certificate)
        }
        let payload: Payload
        do {
            payload = try AppleJSON.decoder().decode(Payload.self, from: parsed.payload)
        } catch {
            throw .malformed("its payload is not the expected JSON")
        }
        try await validate(chain: chain, at: payload.signedDate)
        guard let key = P256.Signing.PublicKey(chain[0].publicKey), parsed.signature.count == 64,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: parsed.signature),
            key.isValidSignature(signature, for: parsed.signingInput)
        else { throw .signatureInvalid }
        return payload
    }

    /// Validates leaf, intermediate and root at `signedDate` to one of the trusted roots.
    private func validate(chain: [Certificate], at signedDate: Date) async throws(SignedDataRefusal) {
        let (leaf, intermediate, root) = (chain[0], chain[1], chain[2])
        guard intermediate.extensions[oid: Self.intermediateOID] != nil else {
            throw .missingAppleOID(position: "intermediate", oid: Self.intermediateOID.description)
        }
        guard leaf.extensions[oid: Self.leafOID] != nil else {
            throw .missingAppleOID(position: "leaf", oid: Self.leafOID.description)
        }
        for (position, certificate) in zip(["leaf", "intermediate", "root"], chain)
        where !(certificate.notValidBefore <= signedDate && signedDate <= certificate.notValidAfter) {
            throw .certificateExpired(position: position, signedDate: signedDate)
        }
        var verifier = Verifier(rootCertificates: CertificateStore(trustedRoots)) {
            RFC5280Policy(fixedExpiryValidationTime: signedDate)
            AppleSigningChainPolicy()
        }
        switch await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate])) {
        case .validCertificate(let validated):
            guard validated.count == 3, validated[2] == root else {
                throw .untrustedChain("the x5c root is not the trusted root the chain leads to")
            }
        case .couldNotValidate(let failures):
            let detail = failures.first.map { "\($0.policyFailureReason)" } ?? "no trusted root issued this chain"
            throw .untrustedChain(detail)
        }
    }
}

/// The chain shape Apple signs with: leaf, intermediate and root, the intermediate and the leaf carrying Apple's
/// extensions. (The verifier checks the same before building the chain, to name the missing one; this policy
/// keeps every chain the builder considers to the same rule.)
struct AppleSigningChainPolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [
        SignedDataVerifier.intermediateOID, SignedDataVerifier.leafOID,
    ]

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        guard chain.count == 3 else {
            return .failsToMeetPolicy(reason: "the chain has \(chain.count) certificates, not 3")
        }
        guard chain[1].extensions[oid: SignedDataVerifier.intermediateOID] != nil else {
            return .failsToMeetPolicy(reason: "the intermediate lacks \(SignedDataVerifier.intermediateOID)")
        }
        guard chain[0].extensions[oid: SignedDataVerifier.leafOID] != nil else {
            return .failsToMeetPolicy(reason: "the leaf lacks \(SignedDataVerifier.leafOID)")
        }
        return .meetsPolicy
    }
}
