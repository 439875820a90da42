import Foundation

/// The `receipt` object of a `verifyReceipt` answer, which comes in two shapes.
///
/// Decoding tells them apart by their keys: `bundle_id` or `in_app` make an app receipt; `bid` or `product_id`
/// make an iOS 6 style transaction receipt.
public enum AppleReceipt: Codable, Sendable, Hashable {
    /// A unified app receipt (iOS 7 and later) listing the app's purchases in `in_app`.
    case app(AppleAppReceipt)
    /// An iOS 6 style receipt for a single transaction, all fields in one flat object.
    case transaction(AppleTransactionReceipt)

    /// The app's bundle identifier: `bundle_id`, or `bid` for a transaction receipt.
    public var bundleID: String {
        switch self {
        case .app(let receipt): receipt.bundleID
        case .transaction(let receipt): receipt.bundleID
        }
    }

    /// Decodes whichever shape the keys reveal; an object that is neither throws.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AppleKey.self)
        if container.contains("bundle_id") || container.contains("in_app") {
            self = .app(try AppleAppReceipt(from: decoder))
        } else if container.contains("bid") || container.contains("product_id") {
            self = .transaction(try AppleTransactionReceipt(from: decoder))
        } else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "A receipt needs bundle_id/in_app (app receipt) or bid/product_id (iOS 6)."
                )
            )
        }
    }

    /// Encodes the wrapped shape as a flat object, as Apple does.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .app(let receipt): try receipt.encode(to: encoder)
        case .transaction(let receipt): try receipt.encode(to: encoder)
        }
    }
}

/// A unified app receipt: the app's identity and its purchases (`in_app`).
public struct AppleAppReceipt: Codable, Sendable, Hashable {
    /// `receipt_type`: `Production`, `ProductionSandbox`, `ProductionVPP`, ….
    public var receiptType: String?
    /// `bundle_id`.
    public var bundleID: String
    /// `application_version`: the app's build (`CFBundleVersion`) when the receipt was made.
    public var applicationVersion: String?
    /// `original_application_version`: the build the user first bought.
    public var originalApplicationVersion: String?
    /// `app_item_id` (also sent as `adam_id`); `0` in the sandbox.
    public var appItemID: Int64?
    /// `receipt_creation_date_ms`.
    public var creationDate: Date?
    /// `request_date_ms`: when the store answered.
    public var requestDate: Date?
    /// `original_purchase_date_ms`: when the user first bought the app.
    public var originalPurchaseDate: Date?
    /// `expiration_date_ms`, for volume-purchase receipts.
    public var expirationDate: Date?
    /// `in_app`: the purchases; finished consumables may be missing.
    public var inApp: [AppleTransaction]

    /// Creates an app receipt; the sandbox store builds its answers from these.
    public init(
        receiptType: String? = nil,
        bundleID: String,
        applicationVersion: String? = nil,
        originalApplicationVersion: String? = nil,
        appItemID: Int64? = nil,
        creationDate: Date? = nil,
        requestDate: Date? = nil,
        originalPurchaseDate: Date? = nil,
        expirationDate: Date? = nil,
        inApp: [AppleTransaction] = []
    ) {
        self.receiptType = receiptType
        self.bundleID = bundleID
        self.applicationVersion = applicationVersion
        self.originalApplicationVersion = originalApplicationVersion
        self.appItemID = appItemID
        self.creationDate = creationDate
        self.requestDate = requestDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expirationDate = expirationDate
        self.inApp = inApp
    }

    /// Decodes leniently (numbers or strings, any date spelling); `bundle_id` is required.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AppleKey.self)
        let appItemID = try container.lenientString("app_item_id") ?? container.lenientString("adam_id")
        self.init(
            receiptType: try container.lenientString("receipt_type"),
            bundleID: try container.requiredString("bundle_id"),
            applicationVersion: try container.lenientString("application_version"),
            originalApplicationVersion: try container.lenientString("original_application_version"),
            appItemID: appItemID.flatMap { Int64($0) },
            creationDate: try container.lenientDate("receipt_creation_date"),
            requestDate: try container.lenientDate("request_date"),
            originalPurchaseDate: try container.lenientDate("original_purchase_date"),
            expirationDate: try container.lenientDate("expiration_date"),
            inApp: try container.decodeIfPresent([AppleTransaction].self, forKey: "in_app") ?? []
        )
    }

    /// Encodes as Apple does: dates in their `_ms`, human and `_pst` forms, `in_app` always present.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AppleKey.self)
        try container.encodeIfPresent(receiptType, forKey: "receipt_type")
        if let appItemID {
            try container.encode(appItemID, forKey: "adam_id")
            try container.encode(appItemID, forKey: "app_item_id")
        }
        try container.encode(bundleID, forKey: "bundle_id")
        try container.encodeIfPresent(applicationVersion, forKey: "application_version")
        try container.encodeAppleDate(requestDate, "request_date")
        try container.encodeAppleDate(originalPurchaseDate, "original_purchase_date")
        try container.encodeAppleDate(creationDate, "receipt_creation_date")
        try container.encodeAppleDate(expirationDate, "expiration_date")
        try container.encodeIfPresent(originalApplicationVersion, forKey: "original_application_version")
        try container.encode(inApp, forKey: "in_app")
    }
}

/// An iOS 6 style transaction receipt: one purchase, flattened together with the app's `bid` and `bvrs`.
public struct AppleTransactionReceipt: Codable, Sendable, Hashable {
    /// `bid`: the app's bundle identifier.
    public var bundleID: String
    /// `bvrs`: the app's build.
    public var bundleVersion: String?
    /// `item_id`: the product's App Store item identifier.
    public var itemID: String?
    /// The purchase, whose fields sit beside `bid` in the same object.
    public var transaction: AppleTransaction

    /// Creates a transaction receipt.
    public init(bundleID: String, bundleVersion: String? = nil, itemID: String? = nil, transaction: AppleTransaction) {
        self.bundleID = bundleID
        self.bundleVersion = bundleVersion
        self.itemID = itemID
        self.transaction = transaction
    }

    /// Decodes the flat object; `bid` is required.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AppleKey.self)
        self.init(
            bundleID: try container.requiredString("bid"),
            bundleVersion: try container.lenientString("bvrs"),
            itemID: try container.lenientString("item_id"),
            transaction: try AppleTransaction(from: decoder)
        )
    }

    /// Encodes one flat object: `bid`, `bvrs`, `item_id` and the transaction with `expires_date` in milliseconds.
    public func encode(to encoder: any Encoder) throws {
        try transaction.encode(to: encoder, style: .transactionReceipt)
        var container = encoder.container(keyedBy: AppleKey.self)
        try container.encode(bundleID, forKey: "bid")
        try container.encodeIfPresent(bundleVersion, forKey: "bvrs")
        try container.encodeIfPresent(itemID, forKey: "item_id")
    }
}
