import Foundation

/// A product a receipt entitles its owner to now.
public struct Entitlement: Codable, Sendable, Hashable {
    /// The product this entitlement is for.
    public var productID: String
    /// The store transaction that pays for it.
    public var transactionID: String
    /// The first transaction of the chain (the same as `transactionID` except for renewals and restores).
    public var originalTransactionID: String
    /// When the transaction was made.
    public var purchaseDate: Date
    /// The end of the paid period, for subscriptions.
    public var expiresDate: Date?
    /// How many were bought.
    public var quantity: Int

    /// Creates an entitlement.
    public init(
        productID: String, transactionID: String, originalTransactionID: String, purchaseDate: Date,
        expiresDate: Date? = nil, quantity: Int = 1
    ) {
        self.productID = productID
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.quantity = quantity
    }

    enum CodingKeys: String, CodingKey {
        case productID = "product_id"
        case transactionID = "transaction_id"
        case originalTransactionID = "original_transaction_id"
        case purchaseDate = "purchase_date"
        case expiresDate = "expires_date"
        case quantity
    }

    /// Encodes every key, writing `null` for an absent `expires_date` as the contract shows.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(productID, forKey: .productID)
        try container.encode(transactionID, forKey: .transactionID)
        try container.encode(originalTransactionID, forKey: .originalTransactionID)
        try container.encode(purchaseDate, forKey: .purchaseDate)
        try container.encode(expiresDate, forKey: .expiresDate)
        try container.encode(quantity, forKey: .quantity)
    }
}

/// The body of `POST /v1/receipts/verify`: a receipt or a signed transaction.
public struct ReceiptVerificationRequest: Codable, Sendable, Hashable {
    /// The receipt or signed transaction, as the store gave it to the app.
    public var proof: PurchaseProof

    /// Creates a request.
    public init(proof: PurchaseProof) { self.proof = proof }

    /// Creates a request with a base64 receipt.
    public init(receiptData: String) { self.init(proof: .receipt(receiptData)) }

    /// Decodes `{"receipt-data"}` or `{"signed_transaction"}`.
    public init(from decoder: any Decoder) throws { proof = try PurchaseProof.decode(from: decoder) }

    /// Encodes the proof's field.
    public func encode(to encoder: any Encoder) throws { try proof.encode(to: encoder) }
}

/// The answer to `POST /v1/receipts/verify`: what the receipt entitles now (used to restore purchases).
public struct EntitlementsResponse: Codable, Sendable, Hashable {
    /// `Production` or `Sandbox`: the store environment that issued the receipt.
    public var environment: String
    /// One entry per product the receipt entitles now.
    public var entitlements: [Entitlement]

    /// Creates an answer.
    public init(environment: String, entitlements: [Entitlement]) {
        self.environment = environment
        self.entitlements = entitlements
    }
}
