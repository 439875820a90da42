import Foundation
import KioskStore

/// `verifyReceipt` answers written the way Apple writes them (numbers as strings, dates three ways), and the products
/// and dates the store and server tests share.
package enum VerificationFixtures {
    package static let bundleID = "com.example.kiosk"
    package static let magazine = "com.example.kiosk.magazine.2023-11"
    package static let monthly = "com.example.kiosk.subscription.monthly"
    package static let level = "com.example.kiosk.level.7"

    /// 2023-11-14 22:13:20 UTC.
    package static let november14 = Date(timeIntervalSince1970: 1_700_000_000)
    /// 2023-10-15 22:13:20 UTC, thirty days earlier.
    package static let october15 = Date(timeIntervalSince1970: 1_697_408_000)
    /// 2023-12-14 22:13:20 UTC, thirty days later.
    package static let december14 = Date(timeIntervalSince1970: 1_702_592_000)

    /// A production app receipt: a magazine, a subscription's first (trial) month in `in_app`, its renewal and a
    /// refund of the magazine in `latest_receipt_info`.
    package static let appReceiptJSON = """
        {
          "status": 0,
          "environment": "Production",
          "receipt": {
            "receipt_type": "Production",
            "adam_id": 1234567890,
            "app_item_id": 1234567890,
            "bundle_id": "com.example.kiosk",
            "application_version": "42",
            "download_id": 98765432101234,
            "version_external_identifier": 856000000,
            "receipt_creation_date": "2023-11-14 22:13:20 Etc/GMT",
            "receipt_creation_date_ms": "1700000000000",
            "receipt_creation_date_pst": "2023-11-14 14:13:20 America/Los_Angeles",
            "request_date": "2023-11-15 08:00:00 Etc/GMT",
            "request_date_ms": "1700035200000",
            "request_date_pst": "2023-11-15 00:00:00 America/Los_Angeles",
            "original_purchase_date": "2023-01-02 03:04:05 Etc/GMT",
            "original_purchase_date_ms": "1672628645000",
            "original_purchase_date_pst": "2023-01-01 19:04:05 America/Los_Angeles",
            "original_application_version": "1.0",
            "in_app": [
              {
                "quantity": "1",
                "product_id": "com.example.kiosk.magazine.2023-11",
                "transaction_id": "1000000000000001",
                "original_transaction_id": "1000000000000001",
                "purchase_date": "2023-11-14 22:13:20 Etc/GMT",
                "purchase_date_ms": "1700000000000",
                "purchase_date_pst": "2023-11-14 14:13:20 America/Los_Angeles",
                "original_purchase_date": "2023-11-14 22:13:20 Etc/GMT",
                "original_purchase_date_ms": "1700000000000",
                "original_purchase_date_pst": "2023-11-14 14:13:20 America/Los_Angeles",
                "is_trial_period": "false",
                "in_app_ownership_type": "PURCHASED"
              },
              {
                "quantity": "1",
                "product_id": "com.example.kiosk.subscription.monthly",
                "transaction_id": "1000000000000002",
                "original_transaction_id": "1000000000000002",
                "purchase_date": "2023-10-15 22:13:20 Etc/GMT",
                "purchase_date_ms": "1697408000000",
                "purchase_date_pst": "2023-10-15 15:13:20 America/Los_Angeles",
                "original_purchase_date": "2023-10-15 22:13:20 Etc/GMT",
                "original_purchase_date_ms": "1697408000000",
                "original_purchase_date_pst": "2023-10-15 15:13:20 America/Los_Angeles",
                "expires_date": "2023-11-14 22:13:20 Etc/GMT",
                "expires_date_ms": "1700000000000",
                "expires_date_pst": "2023-11-14 14:13:20 America/Los_Angeles",
                "web_order_line_item_id": "1000000000000100",
                "is_trial_period": "true",
                "is_in_intro_offer_period": "false",
                "in_app_ownership_type": "PURCHASED"
              }
            ]
          },
          "latest_receipt_info": [
            {
              "quantity": "1",
              "product_id": "com.example.kiosk.subscription.monthly",
              "transaction_id": "1000000000000003",
              "original_transaction_id": "1000000000000002",
              "purchase_date": "2023-11-14 22:13:20 Etc/GMT",
              "purchase_date_ms": "1700000000000",
              "purchase_date_pst": "2023-11-14 14:13:20 America/Los_Angeles",
              "original_purchase_date": "2023-10-15 22:13:20 Etc/GMT",
              "original_purchase_date_ms": "1697408000000",
              "original_purchase_date_pst": "2023-10-15 15:13:20 America/Los_Angeles",
              "expires_date": "2023-12-14 22:13:20 Etc/GMT",
              "expires_date_ms": "1702592000000",
              "expires_date_pst": "2023-12-14 14:13:20 America/Los_Angeles",
              "web_order_line_item_id": "1000000000000101",
              "is_trial_period": "false",
              "is_in_intro_offer_period": "false",
              "subscription_group_identifier": "20000001"
            },
            {
              "quantity": "1",
              "product_id": "com.example.kiosk.subscription.monthly",
              "transaction_id": "1000000000000002",
              "original_transaction_id": "1000000000000002",
              "purchase_date": "2023-10-15 22:13:20 Etc/GMT",
              "purchase_date_ms": "1697408000000",
              "purchase_date_pst": "2023-10-15 15:13:20 America/Los_Angeles",
              "original_purchase_date": "2023-10-15 22:13:20 Etc/GMT",
              "original_purchase_date_ms": "1697408000000",
              "original_purchase_date_pst": "2023-10-15 15:13:20 America/Los_Angeles",
              "expires_date": "2023-11-14 22:13:20 Etc/GMT",
              "expires_date_ms": "1700000000000",
              "expires_date_pst": "2023-11-14 14:13:20 America/Los_Angeles",
              "web_order_line_item_id": "1000000000000100",
              "is_trial_period": "true",
              "is_in_intro_offer_period": "false"
            },
            {
              "quantity": "1",
              "product_id": "com.example.kiosk.magazine.2023-11",
              "transaction_id": "1000000000000001",
              "original_transaction_id": "1000000000000001",
              "purchase_date": "2023-11-14 22:13:20 Etc/GMT",
              "purchase_date_ms": "1700000000000",
              "purchase_date_pst": "2023-11-14 14:13:20 America/Los_Angeles",
              "original_purchase_date_ms": "1700000000000",
              "cancellation_date": "2023-11-16 02:00:00 Etc/GMT",
              "cancellation_date_ms": "1700100000000",
              "cancellation_date_pst": "2023-11-15 18:00:00 America/Los_Angeles",
              "cancellation_reason": "0",
              "is_trial_period": "false"
            }
          ],
          "latest_receipt": "MIIUGAYJKoZIhvcNAQcCoIIUCTCCFAUCAQExCzAJBgUrDgMCGgUAMIIDuQYJKoZIhvcNAQcBoIIDqgSCA6Yx",
          "pending_renewal_info": [
            {
              "auto_renew_product_id": "com.example.kiosk.subscription.monthly",
              "product_id": "com.example.kiosk.subscription.monthly",
              "original_transaction_id": "1000000000000002",
              "auto_renew_status": "1"
            }
          ]
        }
        """

    /// An iOS 6 style transaction receipt for a non-consumable game level, from the sandbox.
    package static let transactionReceiptJSON = """
        {
          "receipt": {
            "original_purchase_date_pst": "2013-01-02 03:04:05 America/Los_Angeles",
            "purchase_date_ms": "1357124645000",
            "unique_identifier": "0000b0123456789abcdef0123456789abcdef012",
            "original_transaction_id": "1000000061234567",
            "bvrs": "1.0",
            "transaction_id": "1000000061234567",
            "quantity": "1",
            "unique_vendor_identifier": "6B2D6C43-0E4A-4C1B-8F5D-2D7E3A9B1C00",
            "item_id": "580123456",
            "product_id": "com.example.kiosk.level.7",
            "purchase_date": "2013-01-02 11:04:05 Etc/GMT",
            "original_purchase_date": "2013-01-02 11:04:05 Etc/GMT",
            "purchase_date_pst": "2013-01-02 03:04:05 America/Los_Angeles",
            "bid": "com.example.kiosk",
            "original_purchase_date_ms": "1357124645000"
          },
          "status": 0,
          "environment": "Sandbox"
        }
        """

    /// An iOS 6 style auto-renewable that has expired (status 21006): `expires_date` is milliseconds, and the
    /// last renewal comes as one object in `latest_expired_receipt_info`.
    package static let expiredTransactionReceiptJSON = """
        {
          "status": 21006,
          "receipt": {
            "bid": "com.example.kiosk",
            "bvrs": "1.0",
            "product_id": "com.example.kiosk.subscription.monthly",
            "transaction_id": "1000000061230001",
            "original_transaction_id": "1000000061230001",
            "purchase_date": "2013-01-02 11:04:05 Etc/GMT",
            "purchase_date_ms": "1357124645000",
            "quantity": "1",
            "expires_date": "1357729445000",
            "expires_date_formatted": "2013-01-09 11:04:05 Etc/GMT",
            "web_order_line_item_id": "1000000026812345"
          },
          "latest_expired_receipt_info": {
            "bid": "com.example.kiosk",
            "bvrs": "1.0",
            "product_id": "com.example.kiosk.subscription.monthly",
            "transaction_id": "1000000061230002",
            "original_transaction_id": "1000000061230001",
            "purchase_date": "2013-01-09 11:04:05 Etc/GMT",
            "purchase_date_ms": "1357729445000",
            "quantity": "1",
            "expires_date": "1358334245000",
            "expires_date_formatted": "2013-01-16 11:04:05 Etc/GMT"
          }
        }
        """

    /// Decodes a fixture.
    package static func decode(_ json: String) throws -> AppleVerifyReceiptResponse {
        try JSONDecoder().decode(AppleVerifyReceiptResponse.self, from: Data(json.utf8))
    }

    /// A minimal valid answer with one non-consumable purchase.
    package static func success(
        status: Int = 0, environment: StoreEnvironment = .production
    ) -> AppleVerifyReceiptResponse {
        AppleVerifyReceiptResponse(
            status: status,
            environment: environment,
            receipt: .app(
                AppleAppReceipt(
                    bundleID: bundleID,
                    inApp: [AppleTransaction(productID: magazine, transactionID: "1", purchaseDate: november14)]
                )
            )
        )
    }

    /// An answer with only a status (and, optionally, the retry flag), as Apple sends for errors.
    package static func failure(_ status: Int, isRetryable: Bool? = nil) -> AppleVerifyReceiptResponse {
        AppleVerifyReceiptResponse(status: status, isRetryable: isRetryable)
    }

    /// The JSON of `response`, as a store would send it.
    package static func body(_ response: AppleVerifyReceiptResponse) -> Data {
        (try? JSONEncoder().encode(response)) ?? Data()
    }

    /// A syntactically valid base64 receipt distinct for each `seed`.
    package static func receipt(_ seed: Int = 0) -> String {
        Data("receipt-\(seed)-\(String(repeating: "x", count: 40))".utf8).base64EncodedString()
    }

    /// 2026-11-01T00:00:00Z.
    package static let november2026 = Date(timeIntervalSince1970: 1_793_491_200)
}
