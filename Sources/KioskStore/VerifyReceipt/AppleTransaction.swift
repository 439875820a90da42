import Foundation

/// One purchase as Apple lists it in a `verifyReceipt` answer: an element of `receipt.in_app` or
/// `latest_receipt_info`, or the body of an iOS 6 style transaction receipt.
///
/// Apple sends numbers as strings (`"quantity": "1"`) and each date three ways (`purchase_date_ms`,
/// `purchase_date`, `purchase_date_pst`). Decoding accepts strings or numbers and any of the date spellings;
/// encoding writes what Apple writes, so the sandbox store's answers look like Apple's.
public struct AppleTransaction: Codable, Sendable, Hashable {
    /// `product_id`.
    public var productID: String
    /// `transaction_id`.
    public var transactionID: String
    /// `original_transaction_id`; the transaction's own ID when Apple leaves it out.
    public var originalTransactionID: String
    /// `purchase_date_ms` (or `purchase_date`).
    public var purchaseDate: Date
    /// `original_purchase_date_ms`.
    public var originalPurchaseDate: Date?
    /// `expires_date_ms`; for iOS 6 style receipts, `expires_date` in milliseconds.
    public var expiresDate: Date?
    /// `cancellation_date_ms`: when Apple refunded or revoked the purchase.
    public var cancellationDate: Date?
    /// `cancellation_reason`: `1` for an app issue, `0` for another reason.
    public var cancellationReason: Int?
    /// `quantity`; `1` when absent.
    public var quantity: Int
    /// `web_order_line_item_id`, for subscriptions.
    public var webOrderLineItemID: String?
    /// `is_trial_period`.
    public var isTrialPeriod: Bool?
    /// `is_in_intro_offer_period`.
    public var isInIntroOfferPeriod: Bool?

    /// Creates a transaction; the sandbox store builds its answers from these.
    public init(
        productID: String,
        transactionID: String,
        originalTransactionID: String? = nil,
        purchaseDate: Date,
        originalPurchaseDate: Date? = nil,
        expiresDate: Date? = nil,
        cancellationDate: Date? = nil,
        cancellationReason: Int? = nil,
        quantity: Int = 1,
        webOrderLineItemID: String? = nil,
        isTrialPeriod: Bool? = nil,
        isInIntroOfferPeriod: Bool? = nil
    ) {
        self.productID = productID
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID ?? transactionID
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.cancellationDate = cancellationDate
        self.cancellationReason = cancellationReason
        self.quantity = quantity
        self.webOrderLineItemID = webOrderLineItemID
        self.isTrialPeriod = isTrialPeriod
        self.isInIntroOfferPeriod = isInIntroOfferPeriod
    }

    /// Decodes either style; fields that are present but unreadable throw rather than being guessed.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AppleKey.self)
        let transactionID = try container.requiredString("transaction_id")
        guard let purchaseDate = try container.lenientDate("purchase_date") else {
            throw DecodingError.keyNotFound(
                AppleKey("purchase_date_ms"),
                .init(codingPath: container.codingPath, debugDescription: "A transaction needs a purchase date.")
            )
        }
        self.init(
            productID: try container.requiredString("product_id"),
            transactionID: transactionID,
            originalTransactionID: try container.lenientString("original_transaction_id"),
            purchaseDate: purchaseDate,
            originalPurchaseDate: try container.lenientDate("original_purchase_date"),
            expiresDate: try container.lenientDate("expires_date"),
            cancellationDate: try container.lenientDate("cancellation_date"),
            cancellationReason: try container.lenientInt("cancellation_reason"),
            quantity: try container.lenientInt("quantity") ?? 1,
            webOrderLineItemID: try container.lenientString("web_order_line_item_id"),
            isTrialPeriod: try container.lenientBool("is_trial_period"),
            isInIntroOfferPeriod: try container.lenientBool("is_in_intro_offer_period")
        )
    }

    /// Encodes in the style of an app receipt's `in_app` element.
    public func encode(to encoder: any Encoder) throws {
        try encode(to: encoder, style: .appReceipt)
    }

    /// The two ways Apple writes a transaction.
    enum EncodingStyle {
        /// `in_app` and `latest_receipt_info` elements: `expires_date_ms` plus human `expires_date`.
        case appReceipt
        /// iOS 6 transaction receipts: `expires_date` in milliseconds plus `expires_date_formatted`.
        case transactionReceipt
    }

    func encode(to encoder: any Encoder, style: EncodingStyle) throws {
        var container = encoder.container(keyedBy: AppleKey.self)
        try container.encode(String(quantity), forKey: "quantity")
        try container.encode(productID, forKey: "product_id")
        try container.encode(transactionID, forKey: "transaction_id")
        try container.encode(originalTransactionID, forKey: "original_transaction_id")
        try container.encodeAppleDate(purchaseDate, "purchase_date")
        try container.encodeAppleDate(originalPurchaseDate, "original_purchase_date")
        switch style {
        case .appReceipt:
            try container.encodeAppleDate(expiresDate, "expires_date")
        case .transactionReceipt:
            if let expiresDate {
                try container.encode(AppleDate.milliseconds(expiresDate), forKey: "expires_date")
                try container.encodeAppleString(
                    AppleDate.string(expiresDate, timeZoneID: AppleDate.gmt), "expires_date_formatted"
                )
                try container.encodeAppleString(
                    AppleDate.string(expiresDate, timeZoneID: AppleDate.pacific), "expires_date_formatted_pst"
                )
            }
        }
        try container.encodeAppleDate(cancellationDate, "cancellation_date")
        try container.encodeAppleString(cancellationReason, "cancellation_reason")
        try container.encodeAppleString(webOrderLineItemID, "web_order_line_item_id")
        try container.encodeAppleString(isTrialPeriod, "is_trial_period")
        try container.encodeAppleString(isInIntroOfferPeriod, "is_in_intro_offer_period")
    }
}
