import Crypto
import Foundation
import KioskCore
import SwiftASN1
import X509

/// A compact JWS (`header.payload.signature`, each part base64url) as StoreKit 2 and the App Store Server
/// Notifications sign them: an ES256 signature by the leaf of the `x5c` certificate chain in the header.
struct JWSCompact: Sendable {
    /// The protected header's fields Kiosk reads.
    struct Header: Codable, Sendable {
        /// The signature algorithm; only `ES256` is accepted.
        var alg: String
        /// The certificate chain, leaf first, each certificate base64 (standard, not url) DER.
        var x5c: [String]?
    }

    /// The decoded header.
    let header: Header
    /// The decoded payload (JSON).
    let payload: Data
    /// The decoded signature.
    let signature: Data
    /// `header.payload` as sent: what the signature covers.
    let signingInput: Data

    /// The longest JWS accepted: Apple's are a few kilobytes (three certificates and a payload).
    static let maximumLength = 64 * 1024

    /// Splits and decodes a compact JWS; nil when it is not one.
    init?(_ text: String) {
        guard text.utf8.count <= Self.maximumLength else { return nil }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]),
            let header = try? JSONDecoder().decode(Header.self, from: headerData),
            let payload = Base64URL.decode(parts[1]), let signature = Base64URL.decode(parts[2])
        else { return nil }
        self.header = header
        self.payload = payload
        self.signature = signature
        self.signingInput = Data(parts[0...1].joined(separator: ".").utf8)
    }

    /// Signs `payload` with ES256 under `key`, announcing `chain` (leaf first) in `x5c`.
    static func sign(payload: Data, key: P256.Signing.PrivateKey, chain: [Certificate]) throws -> String {
        let x5c = try chain.map { Data(try $0.serializeAsDER()).base64EncodedString() }
        let header = try JSONEncoder().encode(Header(alg: "ES256", x5c: x5c))
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }
}

extension Certificate {
    /// The certificate's DER bytes.
    func serializeAsDER() throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(self)
        return serializer.serializedBytes
    }
}
