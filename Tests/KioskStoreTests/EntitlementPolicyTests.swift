import Foundation
import KioskCore
import KioskStore
import KioskStoreTestSupport
import Testing

@Suite("Entitlement policy")
struct EntitlementPolicyTests {
    typealias F = VerificationFixtures

    let policy = EntitlementPolicy(bundleID: F.bundleID)
    let day: TimeInterval = 86_400

    func receipt(_ transactions: [StoreTransaction], bundleID: String = F.bundleID) -> VerifiedReceipt {
        VerifiedReceipt(environment: .sandbox, bundleID: bundleID, transactions: transactions, status: 0)
    }

    func purchase(
        _ productID: String, _ transactionID: String, at purchaseDate: Date, expires: Date? = nil,
        cancelled: Date? = nil
    ) -> StoreTransaction {
        StoreTransaction(
            productID: productID, transactionID: transactionID, purchaseDate: purchaseDate, expiresDate: expires,
            cancellationDate: cancelled
        )
    }

    // MARK: Refusals common to all types

    @Test("A receipt of another app is refused as receipt_invalid", arguments: ProductType.allCases)
    func wrongBundle(type: ProductType) {
        let other = receipt([purchase(F.magazine, "1", at: F.october15)], bundleID: "com.other.app")
        let result = policy.evaluate(productID: F.magazine, productType: type, receipt: other, now: F.november14)
        #expect(result == .failure(.wrongBundle(productID: F.magazine, receiptBundleID: "com.other.app")))
        if case .failure(let refusal) = result {
            #expect(refusal.message.contains(F.magazine))
        }
    }

    @Test("A product absent from the receipt is refused as not_entitled", arguments: ProductType.allCases)
    func notPurchased(type: ProductType) {
        let receipt = receipt([purchase(F.level, "1", at: F.october15, expires: F.december14)])
        let result = policy.evaluate(productID: F.magazine, productType: type, receipt: receipt, now: F.november14)
        #expect(result == .failure(.notPurchased(productID: F.magazine)))
        if case .failure(let refusal) = result {
            #expect(refusal.message == "This receipt contains no purchase of \(F.magazine).")
        }
    }

    @Test("A product whose every transaction was refunded is refused", arguments: ProductType.allCases)
    func refunded(type: ProductType) {
        let receipt = receipt([
            purchase(F.magazine, "1", at: F.october15, expires: F.december14, cancelled: F.october15 + day),
            purchase(F.magazine, "2", at: F.october15 + day, expires: F.december14, cancelled: F.november14),
        ])
        let result = policy.evaluate(productID: F.magazine, productType: type, receipt: receipt, now: F.november14)
        #expect(result == .failure(.refunded(productID: F.magazine)))
        if case .failure(let refusal) = result {
            #expect(refusal.message == "The purchase of \(F.magazine) was refunded or revoked.")
        }
    }

    @Test("A refunded transaction does not hide a standing one", arguments: ProductType.allCases)
    func refundedAndRepurchased(type: ProductType) {
        let receipt = receipt([
            purchase(F.magazine, "1", at: F.october15, expires: F.december14, cancelled: F.october15 + day),
            purchase(F.magazine, "2", at: F.october15 + 2 * day, expires: F.december14),
        ])
        let result = policy.evaluate(productID: F.magazine, productType: type, receipt: receipt, now: F.november14)
        #expect((try? result.get())?.transactionID == "2")
    }

    // MARK: Consumable and non-consumable

    @Test("A non-consumable is granted by its original purchase")
    func nonConsumable() {
        let receipt = receipt([
            purchase(F.level, "restore", at: F.november14),
            purchase(F.level, "original", at: F.october15),
        ])
        let result = policy.evaluate(
            productID: F.level, productType: .nonConsumable, receipt: receipt, now: F.november14)
        #expect((try? result.get())?.transactionID == "original")
    }

    @Test("A consumable is granted by its latest purchase")
    func consumable() {
        let receipt = receipt([
            purchase("coins", "old", at: F.october15),
            purchase("coins", "new", at: F.november14),
        ])
        let result = policy.evaluate(productID: "coins", productType: .consumable, receipt: receipt, now: F.december14)
        #expect((try? result.get())?.transactionID == "new")
    }

    // MARK: Auto-renewable subscriptions

    @Test("Inside the paid window the subscription is granted")
    func subscriptionInside() {
        let receipt = receipt([purchase(F.monthly, "1", at: F.october15, expires: F.november14)])
        let result = policy.evaluate(
            productID: F.monthly, productType: .autoRenewable, receipt: receipt, now: F.october15 + 10 * day
        )
        #expect((try? result.get())?.transactionID == "1")
    }

    @Test("Before the paid window the subscription is not yet active")
    func subscriptionBefore() {
        let receipt = receipt([purchase(F.monthly, "1", at: F.october15, expires: F.november14)])
        let result = policy.evaluate(
            productID: F.monthly, productType: .autoRenewable, receipt: receipt, now: F.october15 - day
        )
        #expect(result == .failure(.notYetActive(productID: F.monthly, startsAt: F.october15)))
    }

    @Test("A purchase a few seconds ahead of our clock counts (clock skew)")
    func subscriptionClockSkew() {
        let receipt = receipt([purchase(F.monthly, "1", at: F.october15, expires: F.november14)])
        let result = policy.evaluate(
            productID: F.monthly, productType: .autoRenewable, receipt: receipt, now: F.october15 - 30
        )
        #expect((try? result.get())?.transactionID == "1")
    }

    @Test("After the paid window, and exactly at its end, the subscription has expired")
    func subscriptionAfter() {
        let receipt = receipt([purchase(F.monthly, "1", at: F.october15, expires: F.november14)])
        for now in [F.november14, F.december14] {
            let result = policy.evaluate(productID: F.monthly, productType: .autoRenewable, receipt: receipt, now: now)
            #expect(result == .failure(.expired(productID: F.monthly, expiredAt: F.november14)))
        }
        if case .failure(let refusal) = policy.evaluate(
            productID: F.monthly, productType: .autoRenewable, receipt: receipt, now: F.december14
        ) {
            #expect(refusal.message == "The subscription \(F.monthly) expired at 2023-11-14T22:13:20Z.")
        }
    }

    @Test("A renewal extends the subscription; the active period's transaction is chosen")
    func subscriptionRenewed() {
        let receipt = receipt([
            purchase(F.monthly, "1", at: F.october15, expires: F.november14),
            purchase(F.monthly, "2", at: F.november14, expires: F.december14),
        ])
        let result = policy.evaluate(
            productID: F.monthly, productType: .autoRenewable, receipt: receipt, now: F.november14 + day
        )
        #expect((try? result.get())?.transactionID == "2")
        let afterBoth = policy.evaluate(
            productID: F.monthly, productType: .autoRenewable, receipt: receipt, now: F.december14 + day
        )
        #expect(afterBoth == .failure(.expired(productID: F.monthly, expiredAt: F.december14)))
    }

    @Test("A refunded renewal leaves only the expired period")
    func subscriptionRenewalRefunded() {
        let receipt = receipt([
            purchase(F.monthly, "1", at: F.october15, expires: F.november14),
            purchase(F.monthly, "2", at: F.november14, expires: F.december14, cancelled: F.november14 + day),
        ])
        let result = policy.evaluate(
            productID: F.monthly, productType: .autoRenewable, receipt: receipt, now: F.november14 + 2 * day
        )
        #expect(result == .failure(.expired(productID: F.monthly, expiredAt: F.november14)))
    }

    @Test("A subscription transaction without an expiry date has no paid period")
    func subscriptionWithoutExpiry() {
        let receipt = receipt([purchase(F.monthly, "1", at: F.october15)])
        let result = policy.evaluate(
            productID: F.monthly, productType: .autoRenewable, receipt: receipt, now: F.november14
        )
        #expect(result == .failure(.expired(productID: F.monthly, expiredAt: nil)))
    }

    // MARK: Non-renewing subscriptions

    @Test("A non-renewing subscription counts without an expiry date or before it")
    func nonRenewing() {
        let open = receipt([purchase("season", "1", at: F.october15)])
        #expect(
            (try? policy.evaluate(productID: "season", productType: .nonRenewing, receipt: open, now: F.december14)
                .get()) != nil)

        let dated = receipt([purchase("season", "1", at: F.october15, expires: F.november14)])
        #expect(
            (try? policy.evaluate(
                productID: "season", productType: .nonRenewing, receipt: dated, now: F.october15 + day
            ).get()) != nil)
        #expect(
            policy.evaluate(productID: "season", productType: .nonRenewing, receipt: dated, now: F.december14)
                == .failure(.expired(productID: "season", expiredAt: F.november14))
        )
    }

    // MARK: Store shapes and listings

    @Test("An iOS 6 transaction receipt entitles its product")
    func iOS6Receipt() throws {
        let receipt = try #require(VerifiedReceipt(response: F.decode(F.transactionReceiptJSON), environment: .sandbox))
        let result = policy.evaluate(
            productID: F.level, productType: .nonConsumable, receipt: receipt, now: F.november14)
        #expect((try? result.get())?.transactionID == "1000000061234567")
        #expect(
            policy.evaluate(productID: F.magazine, productType: .nonConsumable, receipt: receipt, now: F.november14)
                == .failure(.notPurchased(productID: F.magazine))
        )
    }

    @Test("An expired iOS 6 subscription (21006) is inside its renewal's window only then")
    func iOS6Subscription() throws {
        let receipt = try #require(
            VerifiedReceipt(response: F.decode(F.expiredTransactionReceiptJSON), environment: .production)
        )
        let during = Date(timeIntervalSince1970: 1_357_729_445 + day)
        let result = policy.evaluate(productID: F.monthly, productType: .autoRenewable, receipt: receipt, now: during)
        #expect((try? result.get())?.transactionID == "1000000061230002")
        #expect(
            policy.evaluate(productID: F.monthly, productType: .autoRenewable, receipt: receipt, now: F.november14)
                == .failure(.expired(productID: F.monthly, expiredAt: Date(timeIntervalSince1970: 1_358_334_245)))
        )
    }

    @Test("Active entitlements of Apple's sample receipt: the renewed subscription, not the refunded magazine")
    func activeEntitlements() throws {
        let receipt = try #require(VerifiedReceipt(response: F.decode(F.appReceiptJSON), environment: .production))
        let products: EntitlementCatalog = [
            F.magazine: EntitlementProduct(type: .nonConsumable), F.monthly: EntitlementProduct(type: .autoRenewable),
        ]
        let active = policy.activeEntitlements(receipt: receipt, products: products, now: F.november14 + day)
        #expect(active.map(\.transaction.transactionID) == ["1000000000000003"])
        #expect(active.map(\.productID) == [F.monthly])
        #expect(policy.activeEntitlements(receipt: receipt, products: [:], now: F.november14 + day).isEmpty)

        let other = EntitlementPolicy(bundleID: "com.other.app")
        #expect(other.activeEntitlements(receipt: receipt, products: products, now: F.november14 + day).isEmpty)
    }

    @Test("Active entitlements list one transaction per product, ordered by product")
    func activeEntitlementsOnePerProduct() {
        let receipt = receipt([
            purchase("b.level", "3", at: F.november14),
            purchase("a.level", "1", at: F.october15),
            purchase("a.level", "2", at: F.november14),
            purchase("c.unknown", "4", at: F.november14),
        ])
        let active = policy.activeEntitlements(
            receipt: receipt,
            products: [
                "a.level": EntitlementProduct(type: .nonConsumable),
                "b.level": EntitlementProduct(type: .nonConsumable),
            ], now: F.december14)
        #expect(active.map(\.transaction.transactionID) == ["1", "3"])
        #expect(active.map(\.productID) == ["a.level", "b.level"])
    }
}
