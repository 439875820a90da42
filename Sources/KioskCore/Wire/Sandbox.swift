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
    /// The same transaction as a StoreKit 2 signed transaction (compact JWS), signed by the sandbox store's own
    /// certificate chain, which a sandbox-mode server trusts.
    public var signedTransaction: String?

    /// Creates a purchase answer.
    public init(
        receiptData: String, transactionID: String, originalTransactionID: String, productID: String,
        purchaseDate: Date, expiresDate: Date?, signedTransaction: String? = nil
    ) {
        self.signedTransaction = signedTransaction
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
        case signedTransaction = "signed_transaction"
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

/// What `POST /sandbox/notifications` makes the sandbox store do and announce.
public enum SandboxNotificationKind: String, Codable, Sendable, Hashable, CaseIterable {
    /// Refund the transaction, then send `REFUND`.
    case refund
    /// Revoke the transaction (as Family Sharing does), then send `REVOKE`.
    case revoke
    /// Reverse the transaction's refund (or revocation), then send `REFUND_REVERSED`.
    case refundReversed = "refund_reversed"
    /// Renew the subscription for one more period, then send `DID_RENEW`.
    case renew
    /// End the subscription's paid period now, then send `EXPIRED`.
    case expire
    /// Fail the renewal and open a billing grace period, then send `DID_FAIL_TO_RENEW` (`GRACE_PERIOD`).
    case gracePeriod = "grace_period"
    /// Change nothing, and send `CONSUMPTION_REQUEST` (`consumptionRequestReason` `UNINTENDED_PURCHASE`): the
    /// customer asked for a refund, and the App Store asks the server what it knows of the purchase's consumption
    /// (its answers: `GET /sandbox/consumption/{transaction_id}`).
    case consumptionRequest = "consumption_request"
}

/// The body of `POST /sandbox/notifications`.
public struct SandboxNotificationRequest: Codable, Sendable, Hashable {
    /// The transaction concerned (any transaction of a subscription for `renew`, `expire` and `grace_period`).
    public var transactionID: String
    /// What happens.
    public var kind: SandboxNotificationKind
    /// For `grace_period`: how long the grace lasts, in days (default 16, as the App Store's longest).
    public var graceDays: Int?
    /// Whether the notification reaches the server (default `true`). `false` stands for a delivery that failed (the
    /// server down, a wrong URL in App Store Connect): the change is made and the notification is listed in the
    /// notification history as `NO_RESPONSE`, for the server to catch up on.
    public var deliver: Bool?

    /// Creates a request.
    public init(transactionID: String, kind: SandboxNotificationKind, graceDays: Int? = nil, deliver: Bool? = nil) {
        self.transactionID = transactionID
        self.kind = kind
        self.graceDays = graceDays
        self.deliver = deliver
    }

    enum CodingKeys: String, CodingKey {
        case transactionID = "transaction_id"
        case kind
        case graceDays = "grace_days"
        case deliver
    }
}

/// The answer to `POST /sandbox/notifications`: the notification sent, and what the server did with it.
public struct SandboxNotificationResponse: Codable, Sendable, Hashable {
    /// The App Store Server Notifications V2 body that was delivered to `POST /v1/notifications/appstore`.
    public var signedPayload: String
    /// The server's answer to it; absent when it was not delivered (`"deliver": false`).
    public var result: NotificationResult?

    /// Creates an answer.
    public init(signedPayload: String, result: NotificationResult?) {
        self.signedPayload = signedPayload
        self.result = result
    }

    enum CodingKeys: String, CodingKey {
        case signedPayload = "signed_payload"
        case result
    }
}

/// The answer to `GET /sandbox/consumption/{transaction_id}`: the consumption answers the sandbox store's App Store
/// Server API received about a transaction (`PUT …/inApps/v2/transactions/consumption/{transactionId}`), oldest
/// first, as sent.
public struct SandboxConsumptionAnswers: Codable, Sendable, Hashable {
    /// One answer received.
    public struct Answer: Codable, Sendable, Hashable {
        /// When the sandbox received it.
        public var receivedAt: Date
        /// `customerConsented`.
        public var customerConsented: Bool
        /// `consumptionPercentage`, in thousandths of a percent; absent when the answer had none.
        public var consumptionPercentage: Int?
        /// `deliveryStatus`, such as `DELIVERED` or `UNDELIVERED_OTHER`.
        public var deliveryStatus: String
        /// `refundPreference` (`DECLINE`, `GRANT_FULL`, `GRANT_PRORATED`); absent when the answer had none.
        public var refundPreference: String?
        /// `sampleContentProvided`.
        public var sampleContentProvided: Bool

        /// Creates an answer.
        public init(
            receivedAt: Date, customerConsented: Bool, consumptionPercentage: Int?, deliveryStatus: String,
            refundPreference: String?, sampleContentProvided: Bool
        ) {
            self.receivedAt = receivedAt
            self.customerConsented = customerConsented
            self.consumptionPercentage = consumptionPercentage
            self.deliveryStatus = deliveryStatus
            self.refundPreference = refundPreference
            self.sampleContentProvided = sampleContentProvided
        }

        enum CodingKeys: String, CodingKey {
            case receivedAt = "received_at"
            case customerConsented = "customer_consented"
            case consumptionPercentage = "consumption_percentage"
            case deliveryStatus = "delivery_status"
            case refundPreference = "refund_preference"
            case sampleContentProvided = "sample_content_provided"
        }
    }

    /// The transaction.
    public var transactionID: String
    /// Its answers, oldest first (none when none was sent).
    public var answers: [Answer]

    /// Creates the list.
    public init(transactionID: String, answers: [Answer]) {
        self.transactionID = transactionID
        self.answers = answers
    }

    enum CodingKeys: String, CodingKey {
        case transactionID = "transaction_id"
        case answers
    }
}

/// The answer to `POST /v1/notifications/appstore`.
public struct NotificationResult: Codable, Sendable, Hashable {
    /// What the server did with a notification.
    public enum Outcome: String, Codable, Sendable, Hashable {
        /// Applied to the ledger.
        case applied
        /// Already received (same `notificationUUID`); nothing done again.
        case duplicate
        /// Older (`signedDate`) than what the ledger already knows of this subscription: only its facts that
        /// cannot go stale (refunds, new transactions) were applied.
        case stale
        /// A notification type that changes nothing Kiosk keeps (for example `TEST`).
        case ignored
    }

    /// The notification's `notificationUUID`.
    public var notificationUUID: String
    /// Its `notificationType`, such as `REFUND`.
    public var notificationType: String
    /// Its `subtype`, if any.
    public var subtype: String?
    /// What the server did.
    public var outcome: Outcome
    /// The transaction it concerned, if any.
    public var transactionID: String?

    /// Creates a result.
    public init(
        notificationUUID: String, notificationType: String, subtype: String?, outcome: Outcome, transactionID: String?
    ) {
        self.notificationUUID = notificationUUID
        self.notificationType = notificationType
        self.subtype = subtype
        self.outcome = outcome
        self.transactionID = transactionID
    }

    enum CodingKeys: String, CodingKey {
        case notificationUUID = "notification_uuid"
        case notificationType = "notification_type"
        case subtype, outcome
        case transactionID = "transaction_id"
    }
}

/// The answer to `GET /healthz`.
public struct HealthResponse: Codable, Sendable, Hashable {
    /// `ok` while the server serves.
    public var status: String

    /// Creates a health answer.
    public init(status: String = "ok") { self.status = status }
}

/// The answer of `GET /readyz` while the server can take traffic: `{"status": "ready", "checks": {…}}`, one line
/// per check (`database`, `catalog`). A server that cannot answers 503 `not_ready` instead.
public struct ReadinessResponse: Codable, Sendable, Hashable {
    /// `ready`.
    public var status: String
    /// What each check found, by name.
    public var checks: [String: String]

    /// Creates a readiness answer.
    public init(status: String = "ready", checks: [String: String]) {
        self.status = status
        self.checks = checks
    }
}
