import Foundation

/// What an app shows the server to prove a purchase: an App Store receipt (the `verifyReceipt` era) or a StoreKit 2
/// signed transaction (the JWS from `Transaction.jwsRepresentation`).
///
/// On the wire it is one of two fields of the request object: `"receipt-data": "<base64>"` or
/// `"signed_transaction": "<JWS>"`, never both.
public enum PurchaseProof: Sendable, Hashable {
    /// A base64 app receipt, verified with the store.
    case receipt(String)
    /// A StoreKit 2 signed transaction (compact JWS), verified locally against Apple's root certificate.
    case signedTransaction(String)

    /// Whether the proof's text is empty.
    public var isEmpty: Bool {
        switch self {
        case .receipt(let text), .signedTransaction(let text): text.isEmpty
        }
    }

    /// The wire keys of the two proofs.
    enum CodingKeys: String, CodingKey {
        case receiptData = "receipt-data"
        case signedTransaction = "signed_transaction"
    }

    /// Reads exactly one proof field from the request object `decoder` holds.
    static func decode(from decoder: any Decoder) throws -> PurchaseProof {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let receipt = try container.decodeIfPresent(String.self, forKey: .receiptData)
        let signed = try container.decodeIfPresent(String.self, forKey: .signedTransaction)
        switch (receipt, signed) {
        case (let receipt?, nil): return .receipt(receipt)
        case (nil, let signed?): return .signedTransaction(signed)
        case (.some, .some):
            throw WireFormatError("Send either 'receipt-data' or 'signed_transaction', not both.")
        case (nil, nil):
            throw WireFormatError("The field 'receipt-data' or 'signed_transaction' is required.")
        }
    }

    /// Writes the proof's field into `encoder`.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .receipt(let receipt): try container.encode(receipt, forKey: .receiptData)
        case .signedTransaction(let signed): try container.encode(signed, forKey: .signedTransaction)
        }
    }
}

/// A request body that is well-formed JSON but breaks a rule of the wire contract (for example, both proofs).
/// Decoders throw it from `init(from:)`; the server answers it as `bad_request` with this message.
public struct WireFormatError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A sentence naming the rule broken.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}
