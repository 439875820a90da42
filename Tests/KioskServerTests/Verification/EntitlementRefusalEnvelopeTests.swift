import Foundation
import KioskServer
import KioskStore
import Testing

/// How the server answers the entitlement policy's refusals (the policy itself is tested in KioskStoreTests).
@Suite("Entitlement refusals: the API envelope")
struct EntitlementRefusalEnvelopeTests {
    @Test(
        "A receipt of another app is a 403 receipt_invalid, every other refusal a 403 not_entitled",
        arguments: [
            (EntitlementRefusal.wrongBundle(productID: "p", receiptBundleID: "com.other.app"), "receipt_invalid"),
            (.notPurchased(productID: "p"), "not_entitled"),
            (.refunded(productID: "p"), "not_entitled"),
            (.expired(productID: "p", expiredAt: nil), "not_entitled"),
            (.notYetActive(productID: "p", startsAt: Date(timeIntervalSince1970: 0)), "not_entitled"),
            (.publishedOutsidePaidPeriod(productID: "p", subscriptionID: "s"), "not_entitled"),
        ])
    func envelope(refusal: EntitlementRefusal, code: String) {
        #expect(refusal.errorCode.rawValue == code)
        #expect(refusal.status.code == 403)
    }
}
