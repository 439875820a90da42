import Crypto
import Foundation
import KioskStore
import SQLKit
import SwiftASN1
import X509

/// The sandbox store's own App Store signing chain: a root, an intermediate carrying Apple's intermediate OID and a
/// leaf carrying Apple's signing OID, all P-256. It signs the sandbox store's StoreKit 2 transactions and
/// notifications exactly as the App Store signs real ones, and a sandbox-mode server trusts its root, so the whole
/// StoreKit 2 flow runs offline.
///
/// Generated once into the database (``SandboxKeys``), so a restart, and every instance sharing the database, trusts
/// the transactions it signed before.
public struct SandboxSigningAuthority: Sendable {
    /// The sandbox root certificate the sandbox-mode server trusts.
    public let root: Certificate
    let intermediate: Certificate
    let leaf: Certificate
    private let leafKey: P256.Signing.PrivateKey

    /// The chain as it is stored.
    private struct Stored: Codable {
        var root: String
        var intermediate: String
        var leaf: String
        var leafKey: String

        enum CodingKeys: String, CodingKey {
            case root, intermediate, leaf
            case leafKey = "leaf_key"
        }
    }

    private init(_ stored: Stored) throws {
        root = try Certificate(pemEncoded: stored.root)
        intermediate = try Certificate(pemEncoded: stored.intermediate)
        leaf = try Certificate(pemEncoded: stored.leaf)
        leafKey = try P256.Signing.PrivateKey(pemRepresentation: stored.leafKey)
    }

    /// The chain in the database (``SandboxKeys``), generated on first use, or adopted from the file an earlier
    /// release kept in `dataDirectory`.
    public static func load(
        from database: any SQLDatabase, adoptingFileIn dataDirectory: URL, now: Date = Date()
    ) async throws -> SandboxSigningAuthority {
        let data = try await SandboxKeys.loadOrCreate(
            SandboxKeys.signingChain.name, in: database,
            adopting: dataDirectory.appendingPathComponent(SandboxKeys.signingChain.legacyFile)
        ) { try generate(now: now) }
        do {
            return try SandboxSigningAuthority(JSONDecoder().decode(Stored.self, from: data))
        } catch {
            throw SecretFile.Failure(
                description: "the sandbox signing chain in the database is damaged; delete its row of sandbox_keys "
                    + "to generate a new one")
        }
    }

    /// A new chain valid from a day before `now`: the root and intermediate for 20 years, the leaf for 10.
    private static func generate(now: Date) throws -> Data {
        let start = now.addingTimeInterval(-86_400)
        let year: TimeInterval = 365 * 86_400
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName {
            CommonName("Kiosk Sandbox Root CA"); OrganizationName("Kiosk")
        }
        let intermediateName = try DistinguishedName {
            CommonName("Kiosk Sandbox Signing CA"); OrganizationName("Kiosk")
        }
        let leafName = try DistinguishedName {
            CommonName("Kiosk Sandbox StoreKit Signing"); OrganizationName("Kiosk")
        }
        let root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey), notValidBefore: start,
            notValidAfter: start + 20 * year, issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(rootKey))
        let intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey), notValidBefore: start,
            notValidAfter: start + 20 * year, issuer: rootName, subject: intermediateName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                Certificate.Extension(oid: SignedDataVerifier.intermediateOID, critical: false, value: [0x05, 0x00])
            },
            issuerPrivateKey: .init(rootKey))
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey), notValidBefore: start,
            notValidAfter: start + 10 * year, issuer: intermediateName, subject: leafName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                Certificate.Extension(oid: SignedDataVerifier.leafOID, critical: false, value: [0x05, 0x00])
            },
            issuerPrivateKey: .init(intermediateKey))
        let stored = Stored(
            root: try root.serializeAsPEM().pemString, intermediate: try intermediate.serializeAsPEM().pemString,
            leaf: try leaf.serializeAsPEM().pemString, leafKey: leafKey.pemRepresentation)
        return try JSONEncoder().encode(stored)
    }

    /// `payload` as a compact JWS signed like the App Store's (ES256, `x5c` = leaf, intermediate, root).
    func sign(_ payload: some Encodable) throws -> String {
        try JWSCompact.sign(
            payload: try AppleJSON.encoder().encode(payload), key: leafKey, chain: [leaf, intermediate, root])
    }
}
