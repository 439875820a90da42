import Crypto
import Foundation

/// The sandbox store's receipts: a signed list of one sandbox user's transactions, base64-encoded like Apple's.
///
/// `base64({"payload": base64(json), "signature": base64(HMAC-SHA-256(payload))})`. Changing a byte of the payload
/// breaks the signature, and the sandbox store then answers 21002 as Apple does for a tampered receipt.
struct SandboxReceipt: Codable, Equatable {
    var bundleID: String
    var user: String
    var createdAt: Int64
    var transactionIDs: [String]

    enum CodingKeys: String, CodingKey {
        case bundleID = "bundle_id"
        case user
        case createdAt = "created_ms"
        case transactionIDs = "transactions"
    }

    private struct Envelope: Codable {
        var payload: String
        var signature: String
    }

    /// The signed, base64 receipt.
    func encoded(signingKey: SymmetricKey) throws -> String {
        let payload = try JSONEncoder().encode(self)
        let signature = HMAC<SHA256>.authenticationCode(for: payload, using: signingKey)
        let envelope = Envelope(
            payload: payload.base64EncodedString(), signature: Data(signature).base64EncodedString())
        return try JSONEncoder().encode(envelope).base64EncodedString()
    }

    /// The receipt in `receiptData`, or nil when it is not one of ours or its signature does not match.
    static func decode(_ receiptData: String, signingKey: SymmetricKey) -> SandboxReceipt? {
        guard let outer = Data(base64Encoded: receiptData.trimmingCharacters(in: .whitespacesAndNewlines)),
            let envelope = try? JSONDecoder().decode(Envelope.self, from: outer),
            let payload = Data(base64Encoded: envelope.payload),
            let signature = Data(base64Encoded: envelope.signature),
            HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: payload, using: signingKey)
        else { return nil }
        return try? JSONDecoder().decode(SandboxReceipt.self, from: payload)
    }
}
