import Crypto
import Foundation

/// The key an App Store Server API request is signed with: an in-app purchase key made in App Store Connect
/// (Users and Access → Integrations → In-App Purchase), its key ID, the team's issuer ID, and the app's bundle ID.
/// No description of it shows the private key.
public struct AppStoreAPIKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Why a key could not be read. Never holds the key's text.
    public enum Invalid: Error, Hashable, Sendable, CustomStringConvertible {
        /// The PEM is not a P-256 private key (`-----BEGIN PRIVATE KEY-----`, as App Store Connect's `.p8` is).
        case notAP256PrivateKey
        /// The key ID or the issuer ID is empty or not printable ASCII.
        case invalidIdentifier(field: String)

        /// What is wrong, in a sentence.
        public var description: String {
            switch self {
            case .notAP256PrivateKey:
                "the App Store key is not a P-256 private key in PEM (the .p8 file App Store Connect gives)"
            case .invalidIdentifier(let field): "the App Store \(field) is empty or not printable ASCII"
            }
        }
    }

    /// The key's ID (ten characters in App Store Connect): the JWT's `kid`.
    public let keyID: String
    /// The team's issuer ID (a UUID): the JWT's `iss`.
    public let issuerID: String
    /// The app's bundle ID: the JWT's `bid`.
    public let bundleID: String
    /// The private key.
    let privateKey: P256.Signing.PrivateKey

    /// The key in `pem` (a `.p8` file's text), with its IDs.
    public init(pem: String, keyID: String, issuerID: String, bundleID: String) throws(Invalid) {
        for (field, value) in [("key ID", keyID), ("issuer ID", issuerID), ("bundle ID", bundleID)] {
            guard !value.isEmpty, value.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
                throw .invalidIdentifier(field: field)
            }
        }
        do {
            privateKey = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw .notAP256PrivateKey
        }
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
    }

    /// A key made from `privateKey` (tests, and the sandbox store's own key).
    init(privateKey: P256.Signing.PrivateKey, keyID: String, issuerID: String, bundleID: String) {
        self.privateKey = privateKey
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
    }

    /// The public half, which checks the JWTs this key signs.
    public var publicKey: P256.Signing.PublicKey { privateKey.publicKey }

    /// The IDs, never the key.
    public var description: String { "App Store key \(keyID) of issuer \(issuerID) for \(bundleID)" }

    /// The same as ``description``.
    public var debugDescription: String { description }
}
