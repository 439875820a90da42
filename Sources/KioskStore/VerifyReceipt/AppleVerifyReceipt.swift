import Foundation

/// The body of a `POST …/verifyReceipt` request, in Apple's spelling.
///
/// ```json
/// { "receipt-data": "MIIT…", "password": "…", "exclude-old-transactions": false }
/// ```
public struct AppleVerifyReceiptRequest: Codable, Sendable, Hashable {
    /// `receipt-data`: the base64-encoded receipt.
    public var receiptData: String
    /// `password`: the app's shared secret, needed for auto-renewable subscriptions.
    public var password: String?
    /// `exclude-old-transactions`: answer only the latest renewal of each subscription.
    public var excludeOldTransactions: Bool?

    /// Creates a request.
    public init(receiptData: String, password: String? = nil, excludeOldTransactions: Bool? = nil) {
        self.receiptData = receiptData
        self.password = password
        self.excludeOldTransactions = excludeOldTransactions
    }

    /// Decodes leniently (`"exclude-old-transactions": "true"` is accepted); `receipt-data` is required.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AppleKey.self)
        self.init(
            receiptData: try container.decode(String.self, forKey: "receipt-data"),
            password: try container.lenientString("password"),
            excludeOldTransactions: try container.lenientBool("exclude-old-transactions")
        )
    }

    /// Encodes Apple's keys, leaving out those that are `nil`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AppleKey.self)
        try container.encode(receiptData, forKey: "receipt-data")
        try container.encodeIfPresent(password, forKey: "password")
        try container.encodeIfPresent(excludeOldTransactions, forKey: "exclude-old-transactions")
    }
}

/// The answer of `verifyReceipt`: a status code and, when the receipt is valid, its contents.
///
/// Used both to read Apple's answers and to write the sandbox store's. Decoding is lenient where Apple is
/// inconsistent: numbers may be strings, the retry flag is spelled `is_retryable` or `is-retryable`, iOS 6 style
/// answers give `latest_receipt_info` as one object instead of an array, and a `pending_renewal_info` that cannot
/// be read is dropped rather than failing the answer.
public struct AppleVerifyReceiptResponse: Codable, Sendable, Hashable {
    /// `status`: `0` when valid, otherwise one of Apple's 21000-range codes.
    public var status: Int
    /// `environment`: which store made the receipt (`Production` or `Sandbox`); unknown values read as `nil`.
    public var environment: StoreEnvironment?
    /// `receipt`: the decoded receipt, when the status is `0` or `21006`.
    public var receipt: AppleReceipt?
    /// `latest_receipt_info`: the latest transactions, including subscription renewals.
    public var latestReceiptInfo: [AppleTransaction]?
    /// `latest_expired_receipt_info`: iOS 6 style answers only, the last renewal of an expired subscription.
    public var latestExpiredReceiptInfo: AppleTransaction?
    /// `latest_receipt`: the latest base64-encoded receipt.
    public var latestReceipt: String?
    /// `pending_renewal_info`: the renewal state of each subscription.
    public var pendingRenewalInfo: [ApplePendingRenewalInfo]?
    /// `is_retryable` (Apple also writes `is-retryable`): whether the request may succeed if repeated.
    public var isRetryable: Bool?

    /// Creates an answer; the sandbox store builds its answers from these.
    public init(
        status: Int,
        environment: StoreEnvironment? = nil,
        receipt: AppleReceipt? = nil,
        latestReceiptInfo: [AppleTransaction]? = nil,
        latestExpiredReceiptInfo: AppleTransaction? = nil,
        latestReceipt: String? = nil,
        pendingRenewalInfo: [ApplePendingRenewalInfo]? = nil,
        isRetryable: Bool? = nil
    ) {
        self.status = status
        self.environment = environment
        self.receipt = receipt
        self.latestReceiptInfo = latestReceiptInfo
        self.latestExpiredReceiptInfo = latestExpiredReceiptInfo
        self.latestReceipt = latestReceipt
        self.pendingRenewalInfo = pendingRenewalInfo
        self.isRetryable = isRetryable
    }

    /// Decodes leniently as described on the type; a missing `status` or an unreadable receipt throws.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AppleKey.self)
        guard let status = try container.lenientInt("status") else {
            throw DecodingError.keyNotFound(
                AppleKey("status"), .init(codingPath: container.codingPath, debugDescription: "No status.")
            )
        }
        self.status = status
        self.environment = (try? container.lenientString("environment")).flatMap { StoreEnvironment(appleName: $0) }
        self.receipt = try container.decodeIfPresent(AppleReceipt.self, forKey: "receipt")
        self.latestReceiptInfo = try Self.decodeTransactions(container, key: "latest_receipt_info")
        self.latestExpiredReceiptInfo = try container.decodeIfPresent(
            AppleTransaction.self, forKey: "latest_expired_receipt_info"
        )
        self.latestReceipt = try container.lenientString("latest_receipt")
        self.pendingRenewalInfo = try? container.decodeIfPresent(
            [ApplePendingRenewalInfo].self, forKey: "pending_renewal_info"
        )
        self.isRetryable = try container.lenientBool("is_retryable") ?? container.lenientBool("is-retryable")
    }

    /// Encodes as Apple does, with the retry flag spelled `is_retryable`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AppleKey.self)
        try container.encode(status, forKey: "status")
        try container.encodeIfPresent(environment?.rawValue, forKey: "environment")
        try container.encodeIfPresent(receipt, forKey: "receipt")
        try container.encodeIfPresent(latestReceiptInfo, forKey: "latest_receipt_info")
        if let latestExpiredReceiptInfo {
            try latestExpiredReceiptInfo.encode(
                to: container.superEncoder(forKey: "latest_expired_receipt_info"), style: .transactionReceipt
            )
        }
        try container.encodeIfPresent(latestReceipt, forKey: "latest_receipt")
        try container.encodeIfPresent(pendingRenewalInfo, forKey: "pending_renewal_info")
        try container.encodeIfPresent(isRetryable, forKey: "is_retryable")
    }

    /// `latest_receipt_info` as an array, or as one object in iOS 6 style answers.
    private static func decodeTransactions(
        _ container: KeyedDecodingContainer<AppleKey>, key: AppleKey
    ) throws -> [AppleTransaction]? {
        guard container.contains(key), try !container.decodeNil(forKey: key) else { return nil }
        if (try? container.nestedUnkeyedContainer(forKey: key)) != nil {
            return try container.decode([AppleTransaction].self, forKey: key)
        }
        return [try container.decode(AppleTransaction.self, forKey: key)]
    }
}

/// An element of `pending_renewal_info`: what happens to a subscription at its next renewal.
///
/// Decoded leniently: a field that cannot be read is `nil`, never an error, because nothing in Kiosk's
/// entitlement decision depends on it.
public struct ApplePendingRenewalInfo: Codable, Sendable, Hashable {
    /// `product_id`: the subscription's current product.
    public var productID: String?
    /// `auto_renew_product_id`: the product it renews into.
    public var autoRenewProductID: String?
    /// `original_transaction_id`.
    public var originalTransactionID: String?
    /// `auto_renew_status`: `"1"` when it will renew.
    public var autoRenewStatus: Bool?
    /// `expiration_intent`: why it expired (1 cancelled, 2 billing error, …).
    public var expirationIntent: Int?
    /// `is_in_billing_retry_period`.
    public var isInBillingRetryPeriod: Bool?
    /// `grace_period_expires_date_ms`.
    public var gracePeriodExpiresDate: Date?

    /// Creates renewal information.
    public init(
        productID: String? = nil,
        autoRenewProductID: String? = nil,
        originalTransactionID: String? = nil,
        autoRenewStatus: Bool? = nil,
        expirationIntent: Int? = nil,
        isInBillingRetryPeriod: Bool? = nil,
        gracePeriodExpiresDate: Date? = nil
    ) {
        self.productID = productID
        self.autoRenewProductID = autoRenewProductID
        self.originalTransactionID = originalTransactionID
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
    }

    /// Decodes each field on its own; unreadable fields become `nil`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AppleKey.self)
        self.init(
            productID: try? container.lenientString("product_id"),
            autoRenewProductID: try? container.lenientString("auto_renew_product_id"),
            originalTransactionID: try? container.lenientString("original_transaction_id"),
            autoRenewStatus: try? container.lenientBool("auto_renew_status"),
            expirationIntent: try? container.lenientInt("expiration_intent"),
            isInBillingRetryPeriod: try? container.lenientBool("is_in_billing_retry_period"),
            gracePeriodExpiresDate: try? container.lenientDate("grace_period_expires_date")
        )
    }

    /// Encodes Apple's spelling: flags as `"1"`/`"0"`, numbers as strings.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AppleKey.self)
        try container.encodeIfPresent(productID, forKey: "product_id")
        try container.encodeIfPresent(autoRenewProductID, forKey: "auto_renew_product_id")
        try container.encodeIfPresent(originalTransactionID, forKey: "original_transaction_id")
        try container.encodeAppleString(autoRenewStatus.map { $0 ? 1 : 0 }, "auto_renew_status")
        try container.encodeAppleString(expirationIntent, "expiration_intent")
        try container.encodeAppleString(isInBillingRetryPeriod.map { $0 ? 1 : 0 }, "is_in_billing_retry_period")
        try container.encodeAppleDate(gracePeriodExpiresDate, "grace_period_expires_date")
    }
}
