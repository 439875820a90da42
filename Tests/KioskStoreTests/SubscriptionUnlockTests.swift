import Foundation
import KioskStore
import KioskStoreTestSupport
import Testing

@Suite("Subscriptions that unlock issues")
struct SubscriptionUnlockTests {
    typealias F = VerificationFixtures
    let policy = EntitlementPolicy(bundleID: F.bundleID)
    let day: TimeInterval = 86_400
    let start = F.october15

    var issueInside: String { "com.example.kiosk.magazine.inside" }
    var issueOutside: String { "com.example.kiosk.magazine.outside" }

    /// A monthly subscription unlocking magazines; one issue published 10 days into the first period, one 45 days.
    var products: EntitlementCatalog {
        [
            F.monthly: EntitlementProduct(
                type: .autoRenewable, unlocks: SubscriptionUnlocks(productIDPrefix: "com.example.kiosk.magazine.")),
            issueInside: EntitlementProduct(type: .nonConsumable, publishedAt: start + 10 * day),
            issueOutside: EntitlementProduct(type: .nonConsumable, publishedAt: start + 45 * day),
            F.level: EntitlementProduct(type: .nonConsumable, publishedAt: start + 10 * day),
        ]
    }

    func receipt(_ transactions: [StoreTransaction]) -> VerifiedReceipt {
        VerifiedReceipt(environment: .sandbox, bundleID: F.bundleID, transactions: transactions, status: 0)
    }

    func period(_ id: String, from: Date, days: Double, cancelled: Date? = nil) -> StoreTransaction {
        StoreTransaction(
            productID: F.monthly, transactionID: id, originalTransactionID: "p1", purchaseDate: from,
            expiresDate: from + days * day, cancellationDate: cancelled)
    }

    @Test("An issue published inside a paid period is granted by the subscription's transaction")
    func inside() {
        let result = policy.evaluate(
            productID: issueInside, products: products, receipt: receipt([period("p1", from: start, days: 30)]),
            now: start + 12 * day)
        #expect(result.map(\.transactionID) == .success("p1"))
    }

    @Test("An issue published outside every paid period is refused, naming the subscription")
    func outside() {
        let result = policy.evaluate(
            productID: issueOutside, products: products, receipt: receipt([period("p1", from: start, days: 30)]),
            now: start + 12 * day)
        #expect(result == .failure(.publishedOutsidePaidPeriod(productID: issueOutside, subscriptionID: F.monthly)))
    }

    @Test("A renewal moves the window: the later issue is unlocked by the renewal")
    func renewal() {
        let periods = [period("p1", from: start, days: 30), period("p2", from: start + 30 * day, days: 30)]
        let result = policy.evaluate(
            productID: issueOutside, products: products, receipt: receipt(periods), now: start + 46 * day)
        #expect(result.map(\.transactionID) == .success("p2"))
    }

    @Test("An issue obtained during a paid period stays available after the subscription ends")
    func keptAfterExpiry() {
        let result = policy.evaluate(
            productID: issueInside, products: products, receipt: receipt([period("p1", from: start, days: 30)]),
            now: start + 400 * day)
        #expect(result.map(\.transactionID) == .success("p1"))
        let subscription = policy.evaluate(
            productID: F.monthly, products: products, receipt: receipt([period("p1", from: start, days: 30)]),
            now: start + 400 * day)
        #expect(subscription == .failure(.expired(productID: F.monthly, expiredAt: start + 30 * day)))
    }

    @Test("A refunded period unlocks nothing; products the rule does not cover are not unlocked")
    func refundedAndUncovered() {
        let refunded = receipt([period("p1", from: start, days: 30, cancelled: start + day)])
        #expect(
            policy.evaluate(productID: issueInside, products: products, receipt: refunded, now: start + 12 * day).map(
                \.transactionID) != .success("p1"))
        let level = policy.evaluate(
            productID: F.level, products: products, receipt: receipt([period("p1", from: start, days: 30)]),
            now: start + 12 * day)
        #expect(level == .failure(.notPurchased(productID: F.level)))
    }

    @Test("Restore lists the unlocked issues with the subscription")
    func restoreLists() {
        let entitled = policy.activeEntitlements(
            receipt: receipt([period("p1", from: start, days: 30)]), products: products, now: start + 12 * day)
        #expect(entitled.map(\.productID) == [issueInside, F.monthly])
        #expect(entitled.allSatisfy { $0.transaction.transactionID == "p1" })
    }

    @Test("Info.json unlocks: parsed for subscriptions, refused with a clear problem otherwise")
    func parsing() throws {
        func parse(_ type: String, _ unlocks: String) -> Result<ProductInfo, ContentProblem> {
            let json = """
                {"product_id": "com.example.sub", "type": "\(type)", "title": "T", "content_version": "1",
                 "unlocks": \(unlocks)}
                """
            return ProductInfo.parse(Data(json.utf8), folder: "com.example.sub")
        }
        let good = try parse(
            "auto_renewable", #"{"product_id_prefix": "com.example.magazine.", "product_ids": ["com.example.book"]}"#
        ).get()
        #expect(good.unlocks?.covers("com.example.magazine.2026-11") == true)
        #expect(good.unlocks?.covers("com.example.book") == true)
        #expect(good.unlocks?.covers("com.example.levels") == false)
        for (type, unlocks, fragment) in [
            ("non_consumable", #"{"product_ids": ["a.b"]}"#, "only subscriptions"),
            ("auto_renewable", #""com.example.magazine.""#, "must be an object"),
            ("auto_renewable", #"{"prefix": "x"}"#, "unknown key 'prefix'"),
            ("auto_renewable", #"{}"#, "must name products"),
            ("auto_renewable", #"{"product_ids": ["bad id"]}"#, "not a valid product ID"),
            ("auto_renewable", #"{"product_id_prefix": "com.example."}"#, "cannot unlock itself"),
        ] {
            guard case .failure(let problem) = parse(type, unlocks) else {
                Issue.record("\(unlocks) was accepted for \(type)")
                continue
            }
            #expect(problem.field == "unlocks")
            #expect(problem.message.contains(fragment), "\(problem.message)")
        }
    }
}
