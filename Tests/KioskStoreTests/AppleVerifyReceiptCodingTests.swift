import Foundation
import KioskStore
import KioskStoreTestSupport
import Testing

@Suite("Apple verifyReceipt wire types")
struct AppleVerifyReceiptCodingTests {
    typealias F = VerificationFixtures

    @Test("An app receipt decodes with Apple's string numbers and dates")
    func appReceipt() throws {
        let response = try F.decode(F.appReceiptJSON)
        #expect(response.status == 0)
        #expect(response.environment == .production)
        guard case .app(let receipt) = response.receipt else {
            Issue.record("Expected an app receipt")
            return
        }
        #expect(receipt.bundleID == F.bundleID)
        #expect(receipt.applicationVersion == "42")
        #expect(receipt.originalApplicationVersion == "1.0")
        #expect(receipt.receiptType == "Production")
        #expect(receipt.appItemID == 1_234_567_890)
        #expect(receipt.creationDate == F.november14)
        #expect(receipt.inApp.count == 2)

        let subscription = try #require(receipt.inApp.last)
        #expect(subscription.productID == F.monthly)
        #expect(subscription.transactionID == "1000000000000002")
        #expect(subscription.quantity == 1)
        #expect(subscription.purchaseDate == F.october15)
        #expect(subscription.expiresDate == F.november14)
        #expect(subscription.webOrderLineItemID == "1000000000000100")
        #expect(subscription.isTrialPeriod == true)
        #expect(subscription.isInIntroOfferPeriod == false)

        #expect(response.latestReceiptInfo?.count == 3)
        #expect(response.latestReceipt?.hasPrefix("MIIU") == true)
        #expect(response.pendingRenewalInfo?.first?.autoRenewStatus == true)
        #expect(response.isRetryable == nil)
    }

    @Test("latest_receipt_info merges into the receipt's transactions, newest entry winning")
    func mergesLatestReceiptInfo() throws {
        let receipt = try #require(VerifiedReceipt(response: F.decode(F.appReceiptJSON), environment: .production))
        #expect(receipt.bundleID == F.bundleID)
        #expect(receipt.environment == .production)
        #expect(receipt.status == 0)
        // in_app: 001, 002; latest_receipt_info: 003, 002 again, 001 again (now refunded) → three transactions.
        #expect(
            receipt.transactions.map(\.transactionID) == ["1000000000000002", "1000000000000001", "1000000000000003"])

        let magazine = try #require(receipt.transactions.first { $0.productID == F.magazine })
        #expect(magazine.cancellationDate == Date(timeIntervalSince1970: 1_700_100_000))

        let renewal = try #require(receipt.transactions.first { $0.transactionID == "1000000000000003" })
        #expect(renewal.originalTransactionID == "1000000000000002")
        #expect(renewal.purchaseDate == F.november14)
        #expect(renewal.expiresDate == F.december14)
        #expect(renewal.isTrialPeriod == false)
        #expect(renewal.originalPurchaseDate == F.october15)
    }

    @Test("An iOS 6 transaction receipt decodes from its flat object")
    func transactionReceipt() throws {
        let response = try F.decode(F.transactionReceiptJSON)
        #expect(response.environment == .sandbox)
        guard case .transaction(let receipt) = response.receipt else {
            Issue.record("Expected an iOS 6 transaction receipt")
            return
        }
        #expect(receipt.bundleID == F.bundleID)
        #expect(receipt.bundleVersion == "1.0")
        #expect(receipt.itemID == "580123456")
        #expect(receipt.transaction.productID == F.level)
        #expect(receipt.transaction.purchaseDate == Date(timeIntervalSince1970: 1_357_124_645))

        let verified = try #require(VerifiedReceipt(response: response, environment: .sandbox))
        #expect(verified.bundleID == F.bundleID)
        #expect(verified.transactions.count == 1)
        #expect(verified.transactions.first?.productID == F.level)
        #expect(verified.transactions.first?.quantity == 1)
    }

    @Test("An expired iOS 6 subscription: expires_date in milliseconds and latest_expired_receipt_info")
    func expiredTransactionReceipt() throws {
        let response = try F.decode(F.expiredTransactionReceiptJSON)
        #expect(response.status == 21006)
        let verified = try #require(VerifiedReceipt(response: response, environment: .production))
        #expect(verified.transactions.map(\.transactionID) == ["1000000061230001", "1000000061230002"])
        #expect(
            verified.transactions.map(\.expiresDate) == [
                Date(timeIntervalSince1970: 1_357_729_445), Date(timeIntervalSince1970: 1_358_334_245),
            ])
        #expect(verified.transactions.first?.webOrderLineItemID == "1000000026812345")
    }

    @Test("Numbers are accepted as JSON numbers, and human dates stand in for missing _ms fields")
    func lenientNumbers() throws {
        let json = """
            { "status": "0", "environment": "sandbox",
              "receipt": { "bundle_id": "com.example.kiosk", "in_app": [
                { "quantity": 3, "product_id": "com.example.kiosk.coins", "transaction_id": 1000000000000009,
                  "purchase_date": "2023-11-14 22:13:20 Etc/GMT", "is_trial_period": false,
                  "cancellation_date": "", "web_order_line_item_id": 1000000000000100 },
                { "quantity": "1", "product_id": "com.example.kiosk.coins", "transaction_id": "1000000000000010",
                  "purchase_date": "2023-11-14 14:13:20 America/Los_Angeles" },
                { "product_id": "com.example.kiosk.coins", "transaction_id": "1000000000000011",
                  "purchase_date_ms": 1700000000000.0 }
              ] } }
            """
        let response = try F.decode(json)
        #expect(response.status == 0)
        #expect(response.environment == .sandbox)
        guard case .app(let receipt) = response.receipt else {
            Issue.record("Expected an app receipt")
            return
        }
        #expect(receipt.inApp.map(\.quantity) == [3, 1, 1])
        #expect(receipt.inApp.map(\.transactionID) == ["1000000000000009", "1000000000000010", "1000000000000011"])
        #expect(receipt.inApp.map(\.originalTransactionID) == receipt.inApp.map(\.transactionID))
        #expect(receipt.inApp.allSatisfy { $0.purchaseDate == F.november14 })
        #expect(receipt.inApp[0].isTrialPeriod == false)
        #expect(receipt.inApp[0].cancellationDate == nil)
        #expect(receipt.inApp[0].webOrderLineItemID == "1000000000000100")
    }

    @Test(
        "The retry flag is read in both spellings",
        arguments: [
            (#"{"status": 21005, "is_retryable": true}"#, true),
            (#"{"status": 21005, "is_retryable": false}"#, false),
            (#"{"status": 21100, "is-retryable": true}"#, true),
            (#"{"status": 21100, "is-retryable": false}"#, false),
            (#"{"status": 21009, "is-retryable": "true"}"#, true),
            (#"{"status": 21009, "is_retryable": 0}"#, false),
        ]
    )
    func retryFlag(json: String, expected: Bool) throws {
        #expect(try F.decode(json).isRetryable == expected)
    }

    @Test("latest_receipt_info may be one object (iOS 6) and a broken pending_renewal_info is dropped")
    func iOS6LatestReceiptInfoAndBrokenRenewalInfo() throws {
        let json = """
            { "status": 0, "receipt": { "bid": "com.example.kiosk", "product_id": "p", "transaction_id": "1",
                                        "purchase_date_ms": "1700000000000" },
              "latest_receipt_info": { "bid": "com.example.kiosk", "product_id": "p", "transaction_id": "2",
                                       "purchase_date_ms": "1700000000000", "expires_date": "1702592000000" },
              "pending_renewal_info": "not an array" }
            """
        let response = try F.decode(json)
        #expect(response.latestReceiptInfo?.map(\.transactionID) == ["2"])
        #expect(response.latestReceiptInfo?.first?.expiresDate == F.december14)
        #expect(response.pendingRenewalInfo == nil)
    }

    @Test(
        "Answers that are not verifyReceipt answers fail to decode",
        arguments: [
            #"{"environment": "Production"}"#,
            #"{"status": 0, "receipt": {"unrelated": true}}"#,
            #"{"status": 0, "receipt": {"bundle_id": "b", "in_app": [{"product_id": "p"}]}}"#,
            #"{"status": 0, "receipt": {"bundle_id": "b", "in_app": [{"product_id": "p", "transaction_id": "1", "purchase_date_ms": "soon"}]}}"#,
            #"{"status": 0, "receipt": {"bundle_id": "b", "in_app": [{"product_id": "p", "transaction_id": "1", "purchase_date_ms": "1", "quantity": "many"}]}}"#,
            "<html>Service Unavailable</html>",
        ]
    )
    func undecodable(json: String) {
        #expect(throws: (any Error).self) { try F.decode(json) }
    }

    @Test("An unknown environment reads as nil rather than failing the answer")
    func unknownEnvironment() throws {
        #expect(try F.decode(#"{"status": 21003, "environment": "Staging"}"#).environment == nil)
    }

    @Test("Encoding writes Apple's style and round-trips")
    func encodesLikeApple() throws {
        let original = try F.decode(F.appReceiptJSON)
        let data = try JSONEncoder().encode(original)
        #expect(try F.decode(String(decoding: data, as: UTF8.self)) == original)

        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let receipt = try #require(object["receipt"] as? [String: Any])
        let inApp = try #require(receipt["in_app"] as? [[String: Any]])
        let subscription = inApp[1]
        #expect(subscription["quantity"] as? String == "1")
        #expect(subscription["purchase_date_ms"] as? String == "1697408000000")
        #expect(subscription["purchase_date"] as? String == "2023-10-15 22:13:20 Etc/GMT")
        #expect(subscription["purchase_date_pst"] as? String == "2023-10-15 15:13:20 America/Los_Angeles")
        #expect(subscription["expires_date_ms"] as? String == "1700000000000")
        #expect(subscription["is_trial_period"] as? String == "true")
        #expect(receipt["receipt_creation_date_ms"] as? String == "1700000000000")
        #expect(object["environment"] as? String == "Production")
    }

    @Test("The retry flag is written as is_retryable")
    func encodesRetryFlag() throws {
        let data = try JSONEncoder().encode(AppleVerifyReceiptResponse(status: 21005, isRetryable: true))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["is_retryable"] as? Bool == true)
        #expect(object["is-retryable"] == nil)
    }

    @Test("An iOS 6 transaction receipt encodes flat, with expires_date in milliseconds, and round-trips")
    func encodesTransactionReceipt() throws {
        let original = try F.decode(F.expiredTransactionReceiptJSON)
        let data = try JSONEncoder().encode(original)
        #expect(try F.decode(String(decoding: data, as: UTF8.self)) == original)

        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let receipt = try #require(object["receipt"] as? [String: Any])
        #expect(receipt["bid"] as? String == F.bundleID)
        #expect(receipt["product_id"] as? String == F.monthly)
        #expect(receipt["expires_date"] as? String == "1357729445000")
        #expect(receipt["expires_date_formatted"] as? String == "2013-01-09 11:04:05 Etc/GMT")
    }

    @Test("The request uses Apple's keys and leaves out what is nil")
    func request() throws {
        let full = AppleVerifyReceiptRequest(receiptData: "TUlJ", password: "s3cret", excludeOldTransactions: true)
        let object = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(full)) as? [String: Any]
        )
        #expect(object["receipt-data"] as? String == "TUlJ")
        #expect(object["password"] as? String == "s3cret")
        #expect(object["exclude-old-transactions"] as? Bool == true)

        let bare = try JSONEncoder().encode(AppleVerifyReceiptRequest(receiptData: "TUlJ"))
        #expect(String(decoding: bare, as: UTF8.self) == #"{"receipt-data":"TUlJ"}"#)

        let lenient = try JSONDecoder().decode(
            AppleVerifyReceiptRequest.self,
            from: Data(#"{"receipt-data":"TUlJ","exclude-old-transactions":"true"}"#.utf8)
        )
        #expect(lenient == AppleVerifyReceiptRequest(receiptData: "TUlJ", excludeOldTransactions: true))
    }

    @Test("An answer without a receipt has no verified receipt")
    func noReceipt() {
        #expect(VerifiedReceipt(response: F.failure(21003), environment: .production) == nil)
    }
}
