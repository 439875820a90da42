import Foundation

/// Which App Store environment answered: the real store, or the sandbox used in development and App Review.
public enum StoreEnvironment: String, Codable, Sendable, Hashable, CaseIterable {
    /// The production store (`https://buy.itunes.apple.com/verifyReceipt`); Apple spells it `Production`.
    case production = "Production"
    /// The sandbox store (`https://sandbox.itunes.apple.com/verifyReceipt`); Apple spells it `Sandbox`.
    case sandbox = "Sandbox"

    /// Reads Apple's spelling, ignoring case; `nil` for anything else.
    public init?(appleName: String) {
        switch appleName.lowercased() {
        case "production": self = .production
        case "sandbox": self = .sandbox
        default: return nil
        }
    }
}

/// A receipt the store has authenticated, reduced to what Kiosk's entitlement decisions need.
public struct VerifiedReceipt: Sendable, Hashable {
    /// The environment whose endpoint authenticated the receipt.
    public var environment: StoreEnvironment
    /// The bundle identifier the receipt was issued to.
    public var bundleID: String
    /// Every transaction the store reported, one per transaction ID, oldest purchase first.
    public var transactions: [StoreTransaction]
    /// The store's status: `0`, or `21006` for a valid receipt whose subscription has expired.
    public var status: Int

    /// Creates a verified receipt.
    public init(environment: StoreEnvironment, bundleID: String, transactions: [StoreTransaction], status: Int) {
        self.environment = environment
        self.bundleID = bundleID
        self.transactions = transactions
        self.status = status
    }

    /// Normalizes a store answer that carries a receipt; `nil` when it carries none.
    ///
    /// The transactions are the union of the receipt's (`in_app`, or the single iOS 6 transaction),
    /// `latest_expired_receipt_info` and `latest_receipt_info`, de-duplicated by transaction ID with the later
    /// source winning, because `latest_receipt_info` reflects renewals and refunds the receipt may predate.
    ///
    /// - Parameters:
    ///   - response: The decoded `verifyReceipt` answer.
    ///   - environment: The environment whose endpoint gave the answer. It is preferred to the answer's own
    ///     `environment` field, which Apple always sets to the same value.
    public init?(response: AppleVerifyReceiptResponse, environment: StoreEnvironment) {
        guard let receipt = response.receipt else { return nil }
        var receiptTransactions: [AppleTransaction]
        switch receipt {
        case .app(let appReceipt): receiptTransactions = appReceipt.inApp
        case .transaction(let transactionReceipt): receiptTransactions = [transactionReceipt.transaction]
        }
        if let expired = response.latestExpiredReceiptInfo { receiptTransactions.append(expired) }
        receiptTransactions += response.latestReceiptInfo ?? []

        var newest: [String: AppleTransaction] = [:]
        for transaction in receiptTransactions { newest[transaction.transactionID] = transaction }
        self.init(
            environment: environment,
            bundleID: receipt.bundleID,
            transactions: newest.values.map(StoreTransaction.init(apple:)).sorted(by: StoreTransaction.purchaseOrder),
            status: response.status
        )
    }
}

/// One purchase in a ``VerifiedReceipt``.
public struct StoreTransaction: Sendable, Hashable {
    /// The product bought.
    public var productID: String
    /// This transaction's ID; the ledger is idempotent by it.
    public var transactionID: String
    /// The first transaction of this purchase: stays the same across restores and subscription renewals.
    public var originalTransactionID: String
    /// When this transaction was charged (a renewal's own date for subscriptions).
    public var purchaseDate: Date
    /// When the original transaction was charged.
    public var originalPurchaseDate: Date?
    /// The end of the paid period, for subscriptions.
    public var expiresDate: Date?
    /// When the store refunded or revoked it; such a transaction entitles nothing.
    public var cancellationDate: Date?
    /// How many were bought.
    public var quantity: Int
    /// The subscription purchase's ID across devices.
    public var webOrderLineItemID: String?
    /// Whether this period is a free trial.
    public var isTrialPeriod: Bool

    /// Creates a transaction.
    public init(
        productID: String,
        transactionID: String,
        originalTransactionID: String? = nil,
        purchaseDate: Date,
        originalPurchaseDate: Date? = nil,
        expiresDate: Date? = nil,
        cancellationDate: Date? = nil,
        quantity: Int = 1,
        webOrderLineItemID: String? = nil,
        isTrialPeriod: Bool = false
    ) {
        self.productID = productID
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID ?? transactionID
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.cancellationDate = cancellationDate
        self.quantity = quantity
        self.webOrderLineItemID = webOrderLineItemID
        self.isTrialPeriod = isTrialPeriod
    }

    /// Normalizes one of Apple's transactions.
    public init(apple transaction: AppleTransaction) {
        self.init(
            productID: transaction.productID,
            transactionID: transaction.transactionID,
            originalTransactionID: transaction.originalTransactionID,
            purchaseDate: transaction.purchaseDate,
            originalPurchaseDate: transaction.originalPurchaseDate,
            expiresDate: transaction.expiresDate,
            cancellationDate: transaction.cancellationDate,
            quantity: transaction.quantity,
            webOrderLineItemID: transaction.webOrderLineItemID,
            isTrialPeriod: transaction.isTrialPeriod ?? false
        )
    }

    /// Oldest purchase first; equal dates by transaction ID, so the order is stable.
    package static func purchaseOrder(_ lhs: StoreTransaction, _ rhs: StoreTransaction) -> Bool {
        (lhs.purchaseDate, lhs.transactionID) < (rhs.purchaseDate, rhs.transactionID)
    }
}
