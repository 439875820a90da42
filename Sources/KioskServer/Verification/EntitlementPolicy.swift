import Foundation

/// How a product is sold, which decides how its transactions entitle. The server maps catalog types to it.
public enum ProductKind: String, Sendable, Hashable, CaseIterable {
    /// Bought again and again (`consumable`).
    case consumable
    /// Bought once, owned for good (`non_consumable`).
    case nonConsumable
    /// A subscription the store renews (`auto_renewable`); entitles during its paid periods.
    case autoRenewable
    /// A subscription for a fixed time the app manages (`non_renewing`).
    case nonRenewing
}

/// Why a verified receipt does not entitle a product now.
public enum EntitlementRefusal: Error, Sendable, Hashable {
    /// The receipt was issued to another app.
    case wrongBundle(productID: String, receiptBundleID: String)
    /// No transaction of the receipt is for the product.
    case notPurchased(productID: String)
    /// Every transaction for the product was refunded or revoked.
    case refunded(productID: String)
    /// The product's paid periods are all over; `expiredAt` is the latest end, `nil` when the store gave none.
    case expired(productID: String, expiredAt: Date?)
    /// The product's paid periods all start later than now.
    case notYetActive(productID: String, startsAt: Date)

    /// The product asked for.
    public var productID: String {
        switch self {
        case .wrongBundle(let productID, _), .notPurchased(let productID), .refunded(let productID),
            .expired(let productID, _), .notYetActive(let productID, _):
            productID
        }
    }

    /// The stable machine code of the API's error envelope: `receipt_invalid` for a receipt of another app,
    /// `not_entitled` otherwise.
    public var code: String {
        if case .wrongBundle = self { return "receipt_invalid" }
        return "not_entitled"
    }

    /// The HTTP status the API answers with.
    public var httpStatus: Int { 403 }

    /// A sentence for people that names the product.
    public var message: String {
        switch self {
        case .wrongBundle(let productID, let receiptBundleID):
            "This receipt belongs to another app (\(receiptBundleID)), so it cannot unlock \(productID)."
        case .notPurchased(let productID):
            "This receipt contains no purchase of \(productID)."
        case .refunded(let productID):
            "The purchase of \(productID) was refunded or revoked."
        case .expired(let productID, let expiredAt?):
            "The subscription \(productID) expired at \(expiredAt.formatted(.iso8601))."
        case .expired(let productID, nil):
            "The subscription \(productID) is not active."
        case .notYetActive(let productID, let startsAt):
            "The subscription \(productID) starts at \(startsAt.formatted(.iso8601)), not yet."
        }
    }
}

/// Decides what a verified receipt entitles: the server product model's "does this receipt contain that product
/// for this app, not refunded, and inside the paid window".
public struct EntitlementPolicy: Sendable, Hashable {
    /// The app's bundle identifier; receipts of other apps entitle nothing (compared exactly).
    public let bundleID: String
    /// How far a subscription's start may lie ahead of `now` and still count: the store's clock and ours differ,
    /// and a subscription bought a moment ago must not be refused. Does not extend the end of a period.
    public let allowedClockSkew: TimeInterval

    /// Creates a policy for one app.
    public init(bundleID: String, allowedClockSkew: TimeInterval = 60) {
        self.bundleID = bundleID
        self.allowedClockSkew = max(0, allowedClockSkew)
    }

    /// Decides whether `receipt` entitles `productID` at `now`, and by which transaction.
    ///
    /// - Transactions with a cancellation date never count.
    /// - Consumable and non-consumable: any remaining transaction. The non-consumable's earliest (the original
    ///   purchase, stable across restores); the consumable's latest.
    /// - Auto-renewable: a transaction whose `purchaseDate ..< expiresDate` contains `now`; the one that ends
    ///   last. A transaction without an expiry date has no paid period. Refused as `notYetActive` when a paid
    ///   period lies ahead, else as `expired`.
    /// - Non-renewing: a transaction without an expiry date, or one that ends after `now`; the one that ends last.
    public func evaluate(
        productID: String, productKind: ProductKind, receipt: VerifiedReceipt, now: Date
    ) -> Result<StoreTransaction, EntitlementRefusal> {
        guard receipt.bundleID == bundleID else {
            return .failure(.wrongBundle(productID: productID, receiptBundleID: receipt.bundleID))
        }
        let purchases = receipt.transactions.filter { $0.productID == productID }
        guard !purchases.isEmpty else { return .failure(.notPurchased(productID: productID)) }
        let standing = purchases.filter { $0.cancellationDate == nil }
        guard !standing.isEmpty else { return .failure(.refunded(productID: productID)) }

        switch productKind {
        case .consumable:
            return .success(standing.max(by: StoreTransaction.purchaseOrder)!)
        case .nonConsumable:
            return .success(standing.min(by: StoreTransaction.purchaseOrder)!)
        case .autoRenewable:
            let active = standing.filter { transaction in
                guard let expiresDate = transaction.expiresDate else { return false }
                return transaction.purchaseDate.addingTimeInterval(-allowedClockSkew) <= now && now < expiresDate
            }
            if let best = active.max(by: Self.endOrder) { return .success(best) }
            let upcoming = standing.filter { $0.purchaseDate.addingTimeInterval(-allowedClockSkew) > now }
            if let next = upcoming.min(by: StoreTransaction.purchaseOrder) {
                return .failure(.notYetActive(productID: productID, startsAt: next.purchaseDate))
            }
            return .failure(.expired(productID: productID, expiredAt: standing.compactMap(\.expiresDate).max()))
        case .nonRenewing:
            let active = standing.filter { transaction in transaction.expiresDate.map { now < $0 } ?? true }
            if let best = active.max(by: Self.endOrder) { return .success(best) }
            return .failure(.expired(productID: productID, expiredAt: standing.compactMap(\.expiresDate).max()))
        }
    }

    /// Every product `receipt` entitles at `now`, each by its best transaction, ordered by product ID.
    ///
    /// Only products listed in `kinds` (product ID → kind) are considered; a receipt of another app entitles
    /// nothing.
    public func activeEntitlements(
        receipt: VerifiedReceipt, kinds: [String: ProductKind], now: Date
    ) -> [StoreTransaction] {
        guard receipt.bundleID == bundleID else { return [] }
        let productIDs = Set(receipt.transactions.map(\.productID)).sorted()
        return productIDs.compactMap { productID in
            guard let kind = kinds[productID] else { return nil }
            return try? evaluate(productID: productID, productKind: kind, receipt: receipt, now: now).get()
        }
    }

    /// Orders by the end of the paid period (no expiry date: never ends), then by purchase.
    private static func endOrder(_ lhs: StoreTransaction, _ rhs: StoreTransaction) -> Bool {
        let lhsEnd = lhs.expiresDate ?? .distantFuture
        let rhsEnd = rhs.expiresDate ?? .distantFuture
        if lhsEnd != rhsEnd { return lhsEnd < rhsEnd }
        return StoreTransaction.purchaseOrder(lhs, rhs)
    }
}
