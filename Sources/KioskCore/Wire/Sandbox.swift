import Foundation

/// The body of `POST /sandbox/purchases`.
public struct SandboxPurchaseRequest: Codable, Sendable, Hashable {
    /// The product to buy.
    public var productID: String
    /// How many (consumables); 1 otherwise.
    public var quantity: Int?
    /// The sandbox user buying; receipts list all of one user's purchases. Defaults to `default`.
    public var user: String?

    /// Creates a purchase request.
    public init(productID: String, quantity: Int? = nil, user: String? = nil) {
        self.productID = productID
        self.quantity = quantity
        self.user = user
    }

    enum CodingKeys: String, CodingKey {
        case productID = "product_id"
        case quantity, user
    }
}

/// The answer to `POST /sandbox/purchases`.
public struct SandboxPurchaseResponse: Codable, Sendable, Hashable {
    /// The user's app receipt after this purchase (base64), listing all of their purchases.
    public var receiptData: String
    /// The new transaction.
    public var transactionID: String
    /// The first transaction of its chain (equal to `transactionID` for a first purchase).
    public var originalTransactionID: String
    /// The product bought.
    public var productID: String
    /// When it was bought.
    public var purchaseDate: Date
    /// The end of the paid period, for subscriptions.
    public var expiresDate: Date?

    /// Creates a purchase answer.
    public init(
        receiptData: String, transactionID: String, originalTransactionID: String, productID: String,
        purchaseDate: Date, expiresDate: Date?
    ) {
        self.receiptData = receiptData
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
    }

    enum CodingKeys: String, CodingKey {
        case receiptData = "receipt-data"
        case transactionID = "transaction_id"
        case originalTransactionID = "original_transaction_id"
        case productID = "product_id"
        case purchaseDate = "purchase_date"
        case expiresDate = "expires_date"
    }
}

/// The body of `POST /sandbox/refunds`.
public struct SandboxRefundRequest: Codable, Sendable, Hashable {
    /// The transaction to refund.
    public var transactionID: String

    /// Creates a refund request.
    public init(transactionID: String) { self.transactionID = transactionID }

    enum CodingKeys: String, CodingKey { case transactionID = "transaction_id" }
}

/// The answer to `POST /sandbox/refunds`.
public struct SandboxRefundResponse: Codable, Sendable, Hashable {
    /// The refunded transaction.
    public var transactionID: String
    /// When it was cancelled.
    public var cancellationDate: Date

    /// Creates a refund answer.
    public init(transactionID: String, cancellationDate: Date) {
        self.transactionID = transactionID
        self.cancellationDate = cancellationDate
    }

    enum CodingKeys: String, CodingKey {
        case transactionID = "transaction_id"
        case cancellationDate = "cancellation_date"
    }
}

/// The answer to `GET /healthz`.
public struct HealthResponse: Codable, Sendable, Hashable {
    /// `ok` while the server serves.
    public var status: String

    /// Creates a health answer.
    public init(status: String = "ok") { self.status = status }
}
