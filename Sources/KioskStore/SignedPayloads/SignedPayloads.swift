import Foundation

/// A payload Apple signs: it carries the date it was signed, at which its certificate chain must be valid.
package protocol AppleSignedPayload: Codable, Sendable {
    /// When the App Store signed it.
    var signedDate: Date { get }
}

/// A StoreKit 2 transaction (`JWSTransactionDecodedPayload`), the fields Kiosk uses. Dates are milliseconds since
/// 1970 on the wire.
public struct JWSTransaction: AppleSignedPayload, Hashable {
    /// This transaction's ID.
    public var transactionId: String
    /// The first transaction of the purchase (stable across renewals and restores).
    public var originalTransactionId: String
    /// The subscription purchase's ID across devices.
    public var webOrderLineItemId: String?
    /// The app's bundle ID.
    public var bundleId: String
    /// The product bought.
    public var productId: String
    /// When this transaction was charged.
    public var purchaseDate: Date
    /// When the original transaction was charged.
    public var originalPurchaseDate: Date?
    /// The end of the paid period, for subscriptions.
    public var expiresDate: Date?
    /// How many were bought.
    public var quantity: Int?
    /// `Auto-Renewable Subscription`, `Non-Consumable`, `Consumable` or `Non-Renewing Subscription`.
    public var type: String?
    /// When the App Store signed it.
    public var signedDate: Date
    /// When the App Store refunded or revoked it.
    public var revocationDate: Date?
    /// Why (`0`: other, `1`: an app issue).
    public var revocationReason: Int?
    /// `Production` or `Sandbox` (`Xcode` and `LocalTesting` for local StoreKit testing).
    public var environment: String

    /// Creates a transaction payload.
    public init(
        transactionId: String, originalTransactionId: String, webOrderLineItemId: String? = nil, bundleId: String,
        productId: String, purchaseDate: Date, originalPurchaseDate: Date? = nil, expiresDate: Date? = nil,
        quantity: Int? = 1, type: String? = nil, signedDate: Date, revocationDate: Date? = nil,
        revocationReason: Int? = nil, environment: String
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.bundleId = bundleId
        self.productId = productId
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.quantity = quantity
        self.type = type
        self.signedDate = signedDate
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.environment = environment
    }

    /// The transaction as the entitlement policy sees it.
    public var storeTransaction: StoreTransaction {
        StoreTransaction(
            productID: productId, transactionID: transactionId, originalTransactionID: originalTransactionId,
            purchaseDate: purchaseDate, originalPurchaseDate: originalPurchaseDate, expiresDate: expiresDate,
            cancellationDate: revocationDate, quantity: quantity ?? 1, webOrderLineItemID: webOrderLineItemId)
    }
}

/// A subscription's renewal information (`JWSRenewalInfoDecodedPayload`), the fields Kiosk uses.
public struct JWSRenewalInfo: AppleSignedPayload, Hashable {
    /// The subscription's original transaction.
    public var originalTransactionId: String
    /// The product renewing.
    public var productId: String
    /// `1` while the subscription renews automatically.
    public var autoRenewStatus: Int?
    /// The end of the billing grace period, while one is open: the subscriber keeps access until then.
    public var gracePeriodExpiresDate: Date?
    /// Whether the App Store is still trying to bill.
    public var isInBillingRetryPeriod: Bool?
    /// When the App Store signed it.
    public var signedDate: Date
    /// `Production` or `Sandbox`.
    public var environment: String

    /// Creates renewal information.
    public init(
        originalTransactionId: String, productId: String, autoRenewStatus: Int? = nil,
        gracePeriodExpiresDate: Date? = nil, isInBillingRetryPeriod: Bool? = nil, signedDate: Date,
        environment: String
    ) {
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.autoRenewStatus = autoRenewStatus
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.signedDate = signedDate
        self.environment = environment
    }
}

/// An App Store Server Notification V2 (`ResponseBodyV2DecodedPayload`), the fields Kiosk uses.
public struct NotificationPayload: AppleSignedPayload, Hashable {
    /// The app and the signed transaction and renewal information the notification is about.
    public struct Body: Codable, Sendable, Hashable {
        /// The app's bundle ID.
        public var bundleId: String
        /// `Production` or `Sandbox`.
        public var environment: String
        /// The transaction concerned (a JWS, verified like any other).
        public var signedTransactionInfo: String?
        /// The subscription's renewal information (a JWS).
        public var signedRenewalInfo: String?
        /// Why the customer asked for a refund, with `CONSUMPTION_REQUEST`: `UNINTENDED_PURCHASE`,
        /// `FULFILLMENT_ISSUE`, `UNSATISFIED_WITH_PURCHASE`, `LEGAL` or `OTHER`.
        public var consumptionRequestReason: String?

        /// Creates a body.
        public init(
            bundleId: String, environment: String, signedTransactionInfo: String?, signedRenewalInfo: String?,
            consumptionRequestReason: String? = nil
        ) {
            self.bundleId = bundleId
            self.environment = environment
            self.signedTransactionInfo = signedTransactionInfo
            self.signedRenewalInfo = signedRenewalInfo
            self.consumptionRequestReason = consumptionRequestReason
        }
    }

    /// For example `REFUND`, `REVOKE`, `DID_RENEW`, `SUBSCRIBED`, `EXPIRED`, `DID_FAIL_TO_RENEW`.
    public var notificationType: String
    /// For example `GRACE_PERIOD` with `DID_FAIL_TO_RENEW`.
    public var subtype: String?
    /// The notification's unique ID: the App Store resends a notification with the same ID.
    public var notificationUUID: String
    /// `2.0`.
    public var version: String?
    /// When the App Store signed it; orders notifications that arrive out of order.
    public var signedDate: Date
    /// What it is about (absent for summary notifications).
    public var data: Body?

    /// Creates a notification payload.
    public init(
        notificationType: String, subtype: String? = nil, notificationUUID: String, version: String? = "2.0",
        signedDate: Date, data: Body?
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.version = version
        self.signedDate = signedDate
        self.data = data
    }
}

/// The body the App Store posts to a notifications URL: `{"signedPayload": "<JWS>"}`.
package struct SignedNotificationBody: Codable, Sendable {
    /// The notification: a compact JWS whose payload is a ``NotificationPayload``.
    package var signedPayload: String
}

/// The JSON conventions of Apple's signed payloads: dates as milliseconds since 1970.
package enum AppleJSON {
    /// An encoder that writes dates as milliseconds since 1970, keys sorted.
    package static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.millisecondsSince1970)
        }
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    /// A decoder that reads dates as milliseconds since 1970.
    package static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }
}
