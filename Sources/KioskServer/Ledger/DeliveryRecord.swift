import Foundation

/// An installation's report that it installed a product version, as the ledger keeps it (`POST /v1/deliveries`).
public struct DeliveryRecord: Sendable, Hashable {
    /// The purchase whose grant token opened the download.
    public var originalTransactionID: String
    /// The transaction the token names.
    public var transactionID: String
    /// The product installed.
    public var productID: String
    /// Its content version.
    public var contentVersion: String
    /// The installation that installed it.
    public var installationID: String
    /// When it was first reported (a repeat changes nothing).
    public var reportedAt: Date

    /// Creates a record.
    public init(
        originalTransactionID: String, transactionID: String, productID: String, contentVersion: String,
        installationID: String, reportedAt: Date
    ) {
        self.originalTransactionID = originalTransactionID
        self.transactionID = transactionID
        self.productID = productID
        self.contentVersion = contentVersion
        self.installationID = installationID
        self.reportedAt = reportedAt
    }
}

/// An answer to a `CONSUMPTION_REQUEST`, as the ledger keeps it: the body sent, or why none was.
public struct ConsumptionAnswerRecord: Sendable, Hashable {
    /// The notification answered.
    public var notificationUUID: String
    /// The transaction it was about.
    public var transactionID: String
    /// The JSON body Apple accepted; `nil` when the answer was not sent.
    public var body: String?
    /// Why the answer was not sent; `nil` when it was.
    public var failure: String?
    /// When it was sent, or failed.
    public var answeredAt: Date

    /// Creates a record.
    public init(notificationUUID: String, transactionID: String, body: String?, failure: String?, answeredAt: Date) {
        self.notificationUUID = notificationUUID
        self.transactionID = transactionID
        self.body = body
        self.failure = failure
        self.answeredAt = answeredAt
    }
}
