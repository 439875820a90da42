import Foundation
import KioskCore
import KioskStore
import Testing

@testable import KioskServer

@Suite("Consumption answers")
struct ConsumptionAnswerTests {
    typealias Policy = ConsumptionAnswer.Policy

    static let types = ["Consumable", "Non-Consumable", "Auto-Renewable Subscription", "Non-Renewing Subscription"]

    @Test func aDeliveredConsumableIsFullyConsumed() {
        let answer = ConsumptionAnswer.build(
            policy: Policy(refundPreference: .none, sampleContentProvided: false), productType: "Consumable",
            delivered: true)
        #expect(
            answer
                == AppStoreConsumptionRequest(
                    customerConsented: true, consumptionPercentage: 100_000, deliveryStatus: .delivered,
                    refundPreference: nil, sampleContentProvided: false))
    }

    @Test(arguments: types.dropFirst())
    func otherDeliveredContentStatesNoPercentage(type: String) {
        let answer = ConsumptionAnswer.build(
            policy: Policy(refundPreference: .decline, sampleContentProvided: true), productType: type,
            delivered: true)
        #expect(
            answer
                == AppStoreConsumptionRequest(
                    customerConsented: true, consumptionPercentage: nil, deliveryStatus: .delivered,
                    refundPreference: .decline, sampleContentProvided: true))
    }

    @Test(arguments: types + [nil])
    func withoutADeliveryReportNothingIsClaimedConsumed(type: String?) {
        let answer = ConsumptionAnswer.build(
            policy: Policy(refundPreference: .grantFull, sampleContentProvided: false), productType: type,
            delivered: false)
        #expect(answer.deliveryStatus == .undeliveredOther)
        #expect(answer.consumptionPercentage == nil)
        #expect(answer.customerConsented)
        #expect(answer.refundPreference == .grantFull)
    }

    @Test func aProratedRefundIsAskedOnlyWithAPercentageAboveZero() {
        let policy = Policy(refundPreference: .grantProrated, sampleContentProvided: false)
        let consumed = ConsumptionAnswer.build(policy: policy, productType: "Consumable", delivered: true)
        #expect(consumed.refundPreference == .grantProrated && consumed.consumptionPercentage == 100_000)
        for type in Self.types {
            let unknown = ConsumptionAnswer.build(policy: policy, productType: type, delivered: false)
            #expect(unknown.refundPreference == nil, "\(type): Apple refuses GRANT_PRORATED without a percentage")
        }
        let nonConsumable = ConsumptionAnswer.build(policy: policy, productType: "Non-Consumable", delivered: true)
        #expect(nonConsumable.refundPreference == nil)
    }

    @Test func eachPreferenceIsApplesValue() {
        #expect(ConsumptionRefundPreference.none.appStoreValue(consumptionPercentage: 100_000) == nil)
        #expect(ConsumptionRefundPreference.decline.appStoreValue(consumptionPercentage: nil) == .decline)
        #expect(ConsumptionRefundPreference.grantFull.appStoreValue(consumptionPercentage: nil) == .grantFull)
        #expect(ConsumptionRefundPreference.grantProrated.appStoreValue(consumptionPercentage: 0) == nil)
        #expect(ConsumptionRefundPreference.grantProrated.appStoreValue(consumptionPercentage: 1) == .grantProrated)
    }

    @Test func theBodyIsApplesJSON() throws {
        let answer = ConsumptionAnswer.build(
            policy: Policy(refundPreference: .none, sampleContentProvided: false), productType: "Non-Consumable",
            delivered: false)
        let object = try #require(
            try JSONSerialization.jsonObject(with: try JSONEncoder().encode(answer)) as? [String: Any])
        #expect(Set(object.keys) == ["customerConsented", "deliveryStatus", "sampleContentProvided"])
        #expect(object["deliveryStatus"] as? String == "UNDELIVERED_OTHER")
    }
}

@Suite("Delivery records")
struct DeliveryLedgerTests {
    static func delivery(
        _ installation: String, product: String = "com.example.issue", version: String = "1.0",
        original: String = "2000000000000001", at seconds: TimeInterval = 1_800_000_000
    ) -> DeliveryRecord {
        DeliveryRecord(
            originalTransactionID: original, transactionID: "2000000000000009", productID: product,
            contentVersion: version, installationID: installation, reportedAt: Date(timeIntervalSince1970: seconds))
    }

    @Test(arguments: TestDatabase.engines)
    func aDeliveryIsKeptOncePerPurchaseProductVersionAndInstallation(engine: KioskDatabase.Engine) async throws {
        try await LedgerTestFixtures.withLedger(engine) { ledger, _ in
            #expect(try await ledger.recordDelivery(Self.delivery("a")))
            #expect(try await !ledger.recordDelivery(Self.delivery("a", at: 1_800_000_500)))
            #expect(try await ledger.recordDelivery(Self.delivery("b", at: 1_800_000_100)))
            #expect(try await ledger.recordDelivery(Self.delivery("a", version: "2.0", at: 1_800_000_200)))
            #expect(try await ledger.recordDelivery(Self.delivery("a", product: "com.example.other")))
            #expect(try await ledger.recordDelivery(Self.delivery("a", original: "2000000000000002")))
            let kept = try await ledger.deliveries(
                originalTransactionID: "2000000000000001", productID: "com.example.issue")
            #expect(
                kept == [
                    Self.delivery("a"), Self.delivery("b", at: 1_800_000_100),
                    Self.delivery("a", version: "2.0", at: 1_800_000_200),
                ])
            #expect(
                try await ledger.deliveries(originalTransactionID: "2000000000000003", productID: "com.example.issue")
                    .isEmpty)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func consumptionAnswersAreKeptInOrder(engine: KioskDatabase.Engine) async throws {
        try await LedgerTestFixtures.withLedger(engine) { ledger, _ in
            let sent = ConsumptionAnswerRecord(
                notificationUUID: "n1", transactionID: "2000000000000001", body: #"{"deliveryStatus":"DELIVERED"}"#,
                failure: nil, answeredAt: Date(timeIntervalSince1970: 1_800_000_000))
            let failed = ConsumptionAnswerRecord(
                notificationUUID: "n2", transactionID: "2000000000000001", body: nil,
                failure: "the App Store Server API could not be reached",
                answeredAt: Date(timeIntervalSince1970: 1_800_000_001))
            try await ledger.recordConsumptionAnswer(sent)
            try await ledger.recordConsumptionAnswer(failed)
            #expect(try await ledger.consumptionAnswers(transactionID: "2000000000000001") == [sent, failed])
            #expect(try await ledger.consumptionAnswers(transactionID: "2000000000000002").isEmpty)
        }
    }
}
