import Foundation

/// What an app receipt says: the payload of its `SignedData`, a set of attributes (Apple's "Receipt Fields").
public struct AppReceiptContents: Sendable, Hashable {
    /// The app's bundle identifier (attribute 2).
    public var bundleID: String
    /// The app's version, `CFBundleVersion` (attribute 3).
    public var appVersion: String
    /// The version of the app first bought (attribute 19); Xcode receipts have none.
    public var originalAppVersion: String?
    /// `Production`, `ProductionSandbox` or `Xcode` (attribute 0); nil when absent.
    public var receiptType: String?
    /// When the App Store (or Xcode) made this receipt (attribute 12): the time its chain is judged at.
    public var creationDate: Date
    /// When the app was first bought (attribute 18); nil when absent, as in Xcode receipts.
    public var originalPurchaseDate: Date?
    /// When a Volume Purchase Program receipt expires (attribute 21); nil when absent.
    public var expirationDate: Date?
    /// The opaque value hashed with the device identifier and bundle ID into ``sha1Hash`` (attribute 4).
    public var opaqueValue: Data
    /// SHA-1 of the device identifier, ``opaqueValue`` and bundle ID (attribute 5), which an app checks on device.
    public var sha1Hash: Data
    /// The in-app purchase receipts (attribute 17, once per purchase), in receipt order.
    public var inApp: [AppReceiptInApp]

    /// Reads a receipt payload: `bytes` is the `SignedData`'s encapsulated content.
    init(payload bytes: [UInt8]) throws(AppReceiptParseError) {
        let attributes = try ReceiptAttributes(bytes, "the receipt payload")
        bundleID = try attributes.requiredString(2)
        appVersion = try attributes.requiredString(3)
        originalAppVersion = try attributes.string(19)
        receiptType = try attributes.string(0)
        creationDate = try attributes.requiredDate(12)
        originalPurchaseDate = try attributes.date(18)
        expirationDate = try attributes.date(21)
        guard let opaqueValue = try attributes.octets(4) else { throw .missingAttribute(type: 4) }
        guard let sha1Hash = try attributes.octets(5) else { throw .missingAttribute(type: 5) }
        self.opaqueValue = opaqueValue
        self.sha1Hash = sha1Hash
        inApp = []
        for value in attributes.all(17) {
            do throws(AppReceiptParseError) {
                inApp.append(try AppReceiptInApp(payload: value))
            } catch {
                throw .invalidAttribute(type: 17, reason: error.message)
            }
        }
    }

    /// The in-app purchases as Kiosk's transactions: once per transaction ID (the last receipt entry winning),
    /// oldest purchase first, as ``VerifiedReceipt`` orders them.
    public var storeTransactions: [StoreTransaction] {
        var byID: [String: StoreTransaction] = [:]
        for purchase in inApp { byID[purchase.transactionID] = purchase.storeTransaction }
        return byID.values.sorted(by: StoreTransaction.purchaseOrder)
    }
}

/// One in-app purchase receipt (attribute 17 of an app receipt).
public struct AppReceiptInApp: Sendable, Hashable {
    /// How many were bought (attribute 1701); 1 when absent.
    public var quantity: Int
    /// The product bought (attribute 1702).
    public var productID: String
    /// This transaction's ID (attribute 1703); `0` in Xcode receipts.
    public var transactionID: String
    /// The first transaction of this purchase (attribute 1705); nil when absent, as in Xcode receipts.
    public var originalTransactionID: String?
    /// When this transaction was charged (attribute 1704).
    public var purchaseDate: Date
    /// When the original transaction was charged (attribute 1706).
    public var originalPurchaseDate: Date?
    /// The end of a subscription period (attribute 1708).
    public var expiresDate: Date?
    /// When Apple refunded or revoked the purchase (attribute 1712).
    public var cancellationDate: Date?
    /// The subscription purchase's ID across devices (attribute 1711).
    public var webOrderLineItemID: Int64?
    /// Whether this subscription period is a free trial (attribute 1713, nonzero); false when absent.
    public var isTrialPeriod: Bool

    /// Reads one in-app purchase receipt: `bytes` is the value of a type 17 attribute.
    init(payload bytes: [UInt8]) throws(AppReceiptParseError) {
        let attributes = try ReceiptAttributes(bytes, "an in-app purchase receipt")
        let quantity = try attributes.integer(1701) ?? 1
        guard let count = Int(exactly: quantity), count >= 0 else {
            throw .invalidAttribute(type: 1701, reason: "the quantity \(quantity) is out of range")
        }
        self.quantity = count
        productID = try attributes.requiredString(1702)
        transactionID = try attributes.requiredString(1703)
        originalTransactionID = try attributes.string(1705)
        purchaseDate = try attributes.requiredDate(1704)
        originalPurchaseDate = try attributes.date(1706)
        expiresDate = try attributes.date(1708)
        cancellationDate = try attributes.date(1712)
        webOrderLineItemID = try attributes.integer(1711)
        isTrialPeriod = try attributes.integer(1713).map { $0 != 0 } ?? false
    }

    /// This purchase as Kiosk's transaction; the original transaction ID falls back to the transaction ID when the
    /// receipt has none (Xcode receipts).
    public var storeTransaction: StoreTransaction {
        StoreTransaction(
            productID: productID, transactionID: transactionID, originalTransactionID: originalTransactionID,
            purchaseDate: purchaseDate, originalPurchaseDate: originalPurchaseDate, expiresDate: expiresDate,
            cancellationDate: cancellationDate, quantity: quantity,
            webOrderLineItemID: webOrderLineItemID.map(String.init),
            isTrialPeriod: isTrialPeriod)
    }
}
