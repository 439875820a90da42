import Foundation
import KioskStore
import Testing

/// Regressions found by the verify-receipt fuzz target (scripts/fuzz.sh).
@Suite("Apple dates stay within what Kiosk can store and write")
struct AppleDateRangeTests {
    static func answer(purchaseDate: String) -> String {
        #"{"status": 0, "receipt": {"bundle_id": "b", "in_app": [{"product_id": "p", "transaction_id": "1", "#
            + purchaseDate + "}]}}"
    }

    static func decode(_ json: String) throws -> AppleVerifyReceiptResponse {
        try JSONDecoder().decode(AppleVerifyReceiptResponse.self, from: Data(json.utf8))
    }

    /// Such a date used to decode, then trap when the ledger converted it to `Int64` milliseconds.
    @Test(
        "A date too far from 1970 for Int64 milliseconds makes the answer undecodable",
        arguments: [
            #""purchase_date_ms": "99999999999999999999999""#,
            #""purchase_date_ms": 9.3e18"#,
            #""purchase_date_ms": "-9300000000000000000""#,
            #""purchase_date": "300000000-01-01 00:00:00 Etc/GMT""#,
        ])
    func outOfRange(purchaseDate: String) {
        #expect(throws: (any Error).self) { try Self.decode(Self.answer(purchaseDate: purchaseDate)) }
    }

    @Test("Dates before 1970 decode, in every spelling the encoder writes")
    func before1970() throws {
        let fromMilliseconds = try Self.decode(Self.answer(purchaseDate: #""purchase_date_ms": "-1000""#))
        guard case .app(let receipt) = fromMilliseconds.receipt else {
            Issue.record("Expected an app receipt")
            return
        }
        #expect(receipt.inApp.first?.purchaseDate == Date(timeIntervalSince1970: -1))

        // The encoder writes `purchase_date_ms` negative; this answer used not to decode again.
        let human = try Self.decode(Self.answer(purchaseDate: #""purchase_date": "1011-11-14 22:13:20 Etc/GMT""#))
        let reencoded = try JSONEncoder().encode(human)
        #expect(try JSONDecoder().decode(AppleVerifyReceiptResponse.self, from: reencoded) == human)
    }
}
