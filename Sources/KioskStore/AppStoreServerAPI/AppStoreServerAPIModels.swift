import Foundation

// The bodies of the App Store Server API calls Kiosk makes, as Apple's documentation names their fields. Dates are
// milliseconds since 1970, as Apple sends them. Every field Apple may leave out is optional, so an answer with a
// field missing decodes and is judged by the caller, not refused by the decoder.

/// `GET /inApps/v2/history/{transactionId}`: one page of a customer's transactions, oldest modification first.
public struct AppStoreHistoryResponse: Codable, Sendable, Hashable {
    /// Where the next page starts; kept after the last page, it asks later for only what changed since.
    public var revision: String?
    /// Whether another page follows.
    public var hasMore: Bool?
    /// The app's bundle ID.
    public var bundleId: String?
    /// `Production` or `Sandbox`.
    public var environment: String?
    /// The transactions, each a JWS verified like a signed transaction.
    public var signedTransactions: [String]?

    /// A page.
    public init(
        revision: String?, hasMore: Bool?, bundleId: String?, environment: String?, signedTransactions: [String]?
    ) {
        self.revision = revision
        self.hasMore = hasMore
        self.bundleId = bundleId
        self.environment = environment
        self.signedTransactions = signedTransactions
    }
}

/// `GET /inApps/v1/transactions/{transactionId}`: one transaction as the App Store knows it now.
public struct AppStoreTransactionInfoResponse: Codable, Sendable, Hashable {
    /// The transaction, a JWS.
    public var signedTransactionInfo: String?

    /// An answer.
    public init(signedTransactionInfo: String?) {
        self.signedTransactionInfo = signedTransactionInfo
    }
}

/// The body of `POST /inApps/v1/notifications/history`: which notifications to list.
public struct AppStoreNotificationHistoryRequest: Codable, Sendable, Hashable {
    /// The start of the period, inclusive (at most 180 days back).
    public var startDate: Int64
    /// The end of the period, exclusive.
    public var endDate: Int64
    /// Only this type, when given.
    public var notificationType: String?
    /// Only those about this transaction's customer, when given.
    public var transactionId: String?
    /// Only those that no attempt delivered, when true.
    public var onlyFailures: Bool?

    /// A request for the notifications signed in `[startDate, endDate)` (milliseconds since 1970).
    public init(
        startDate: Int64, endDate: Int64, notificationType: String? = nil, transactionId: String? = nil,
        onlyFailures: Bool? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.transactionId = transactionId
        self.onlyFailures = onlyFailures
    }
}

/// The answer of `POST /inApps/v1/notifications/history`: one page of notifications the App Store sent.
public struct AppStoreNotificationHistoryResponse: Codable, Sendable, Hashable {
    /// One notification and what became of each attempt to deliver it.
    public struct Item: Codable, Sendable, Hashable {
        /// The notification, exactly as it was posted: a JWS of a notification payload.
        public var signedPayload: String?
        /// Each delivery attempt.
        public var sendAttempts: [SendAttempt]?

        /// An item.
        public init(signedPayload: String?, sendAttempts: [SendAttempt]?) {
            self.signedPayload = signedPayload
            self.sendAttempts = sendAttempts
        }
    }

    /// One attempt to deliver a notification.
    public struct SendAttempt: Codable, Sendable, Hashable {
        /// When it was made.
        public var attemptDate: Int64?
        /// `SUCCESS`, `NO_RESPONSE`, `TIMED_OUT`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, …
        public var sendAttemptResult: String?

        /// An attempt.
        public init(attemptDate: Int64?, sendAttemptResult: String?) {
            self.attemptDate = attemptDate
            self.sendAttemptResult = sendAttemptResult
        }
    }

    /// Passed back (as the `paginationToken` query) for the next page.
    public var paginationToken: String?
    /// Whether another page follows.
    public var hasMore: Bool?
    /// The notifications.
    public var notificationHistory: [Item]?

    /// A page.
    public init(paginationToken: String?, hasMore: Bool?, notificationHistory: [Item]?) {
        self.paginationToken = paginationToken
        self.hasMore = hasMore
        self.notificationHistory = notificationHistory
    }
}

/// The body of `PUT /inApps/v2/transactions/consumption/{transactionId}`: what the developer knows of a purchase
/// whose customer asked for a refund, sent in answer to a `CONSUMPTION_REQUEST` notification. Apple answers 202.
public struct AppStoreConsumptionRequest: Codable, Sendable, Hashable {
    /// Whether the content was delivered, and if not, why.
    public enum DeliveryStatus: String, Codable, Sendable, Hashable, CaseIterable {
        /// Delivered and working.
        case delivered = "DELIVERED"
        /// Not delivered: a quality issue.
        case undeliveredQualityIssue = "UNDELIVERED_QUALITY_ISSUE"
        /// Not delivered: the wrong item was.
        case undeliveredWrongItem = "UNDELIVERED_WRONG_ITEM"
        /// Not delivered: a server outage.
        case undeliveredServerOutage = "UNDELIVERED_SERVER_OUTAGE"
        /// Not delivered, for another reason.
        case undeliveredOther = "UNDELIVERED_OTHER"
    }

    /// What the developer would like Apple to decide.
    public enum RefundPreference: String, Codable, Sendable, Hashable, CaseIterable {
        /// Refund in full.
        case grantFull = "GRANT_FULL"
        /// Refund the part not consumed (needs a consumption percentage above 0).
        case grantProrated = "GRANT_PRORATED"
        /// Do not refund.
        case decline = "DECLINE"
    }

    /// That the customer consented to sending this (Apple refuses `false`).
    public var customerConsented: Bool
    /// How much was consumed, in thousandths of a percent (100 % is 100000), when that means something.
    public var consumptionPercentage: Int?
    /// Whether the content was delivered.
    public var deliveryStatus: DeliveryStatus
    /// The developer's preference, when it has one.
    public var refundPreference: RefundPreference?
    /// Whether a free sample or trial of the content was offered before the purchase.
    public var sampleContentProvided: Bool

    /// A consumption answer.
    public init(
        customerConsented: Bool, consumptionPercentage: Int?, deliveryStatus: DeliveryStatus,
        refundPreference: RefundPreference?, sampleContentProvided: Bool
    ) {
        self.customerConsented = customerConsented
        self.consumptionPercentage = consumptionPercentage
        self.deliveryStatus = deliveryStatus
        self.refundPreference = refundPreference
        self.sampleContentProvided = sampleContentProvided
    }
}
