import Foundation
import KioskCore

/// What the entitlement policy needs to know of one catalog product.
public struct EntitlementProduct: Sendable, Hashable {
    /// How it is sold, which decides how its transactions entitle.
    public var type: ProductType
    /// When it was published (an issue falls inside a subscription's paid period by this date).
    public var publishedAt: Date?
    /// For subscriptions: the products a paid period unlocks.
    public var unlocks: SubscriptionUnlocks?

    /// Creates a product description.
    public init(type: ProductType, publishedAt: Date? = nil, unlocks: SubscriptionUnlocks? = nil) {
        self.type = type
        self.publishedAt = publishedAt
        self.unlocks = unlocks
    }
}

/// What the entitlement policy knows of the whole catalog, built once per catalog snapshot: every product, and the
/// subscriptions with an `unlocks` rule in product ID order, so that deciding one product looks at those few
/// subscriptions rather than at the whole catalog.
public struct EntitlementCatalog: Sendable, ExpressibleByDictionaryLiteral {
    /// Every product, by ID.
    public let products: [String: EntitlementProduct]
    /// The subscriptions that unlock other products, ordered by product ID.
    let unlockingSubscriptions: [(id: String, unlocks: SubscriptionUnlocks)]

    /// A catalog of these products.
    public init(_ products: [String: EntitlementProduct]) {
        self.products = products
        self.unlockingSubscriptions = products.compactMap { id, product in product.unlocks.map { (id, $0) } }
            .sorted { $0.id < $1.id }
    }

    /// A catalog of these products.
    public init(dictionaryLiteral elements: (String, EntitlementProduct)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { first, _ in first }))
    }

    /// The product with this ID.
    public subscript(productID: String) -> EntitlementProduct? { products[productID] }
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
    /// The product is not bought, and the subscription that unlocks such products was not paid when it was
    /// published.
    case publishedOutsidePaidPeriod(productID: String, subscriptionID: String)

    /// The product asked for.
    public var productID: String {
        switch self {
        case .wrongBundle(let productID, _), .notPurchased(let productID), .refunded(let productID),
            .expired(let productID, _), .notYetActive(let productID, _), .publishedOutsidePaidPeriod(let productID, _):
            productID
        }
    }

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
        case .publishedOutsidePaidPeriod(let productID, let subscriptionID):
            "\(productID) was published outside every paid period of \(subscriptionID), so the subscription does not unlock it."
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
        productID: String, productType: ProductType, receipt: VerifiedReceipt, now: Date
    ) -> Result<StoreTransaction, EntitlementRefusal> {
        guard receipt.bundleID == bundleID else {
            return .failure(.wrongBundle(productID: productID, receiptBundleID: receipt.bundleID))
        }
        let purchases = receipt.transactions.filter { $0.productID == productID }
        guard !purchases.isEmpty else { return .failure(.notPurchased(productID: productID)) }
        let standing = purchases.filter { $0.cancellationDate == nil }
        guard !standing.isEmpty else { return .failure(.refunded(productID: productID)) }

        switch productType {
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

    /// Decides whether `receipt` entitles `productID` at `now`, directly or through a subscription that unlocks it.
    ///
    /// A product the receipt does not entitle directly is entitled by a subscription of `products` whose `unlocks`
    /// rule covers it, when the product's `publishedAt` falls inside one of the subscription's paid periods
    /// (`purchaseDate ..< expiresDate` of a transaction that was not refunded). The entitlement lasts: an issue
    /// published while the subscription was paid stays available after it ends. The paying transaction is then
    /// the subscription's (earliest covering period).
    public func evaluate(
        productID: String, products: EntitlementCatalog, receipt: VerifiedReceipt, now: Date
    ) -> Result<StoreTransaction, EntitlementRefusal> {
        guard let product = products[productID] else { return .failure(.notPurchased(productID: productID)) }
        let direct = evaluate(productID: productID, productType: product.type, receipt: receipt, now: now)
        guard case .failure(let refusal) = direct, receipt.bundleID == bundleID, let publishedAt = product.publishedAt
        else { return direct }
        var outsideOf: String?
        for (subscriptionID, unlocks) in products.unlockingSubscriptions
        where unlocks.covers(productID) && subscriptionID != productID {
            let periods = receipt.transactions.filter {
                $0.productID == subscriptionID && $0.cancellationDate == nil && $0.expiresDate != nil
            }
            if let covering = periods.filter({
                $0.purchaseDate.addingTimeInterval(-allowedClockSkew) <= publishedAt && publishedAt < $0.expiresDate!
            }).min(by: StoreTransaction.purchaseOrder) {
                return .success(covering)
            }
            if !periods.isEmpty { outsideOf = subscriptionID }
        }
        if case .notPurchased = refusal, let outsideOf {
            return .failure(.publishedOutsidePaidPeriod(productID: productID, subscriptionID: outsideOf))
        }
        return direct
    }

    /// Every product `receipt` entitles at `now`, directly or unlocked by a subscription, each by its best
    /// transaction, ordered by product ID. Only products in `products` are considered.
    public func activeEntitlements(
        receipt: VerifiedReceipt, products: EntitlementCatalog, now: Date
    ) -> [(productID: String, transaction: StoreTransaction)] {
        guard receipt.bundleID == bundleID else { return [] }
        let bought = Set(receipt.transactions.map(\.productID))
        let unlocking = bought.compactMap { products[$0]?.unlocks }
        // Only a receipt with an unlocking subscription needs a look at the whole catalog.
        let candidates =
            unlocking.isEmpty
            ? bought.filter { products[$0] != nil }
            : products.products.keys.filter { id in bought.contains(id) || unlocking.contains { $0.covers(id) } }
        return candidates.sorted().compactMap { productID in
            let result = evaluate(productID: productID, products: products, receipt: receipt, now: now)
            guard let transaction = try? result.get() else { return nil }
            return (productID, transaction)
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
