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

    /// Found by the fuzz target on 2026-11-28: three purchases at the same millisecond, one of them written with a
    /// fraction (`1700000000000.1`). The fraction was kept when read and lost when written, so the transactions came
    /// back in another order after a round trip. Dates are read as whole milliseconds now.
    @Test("A fraction of a millisecond is rounded away, so a round trip keeps the transactions' order")
    func fractionalMilliseconds() throws {
        let json =
            #"{"status": "0", "environment": "sandbox", "receipt": {"bundle_id": "b", "in_app": ["#
            + #"{"product_id": "p", "transaction_id": "1000000000000009", "#
            + #""purchase_date": "2023-11-14 22:13:20 Etc/GMT"},"#
            + #"{"product_id": "p", "transaction_id": "1pending", "purchase_date_ms": "1700000000000"},"#
            + #"{"product_id": "p", "transaction_id": "1000000000000011", "purchase_date_ms": 1700000000000.1}]}}"#
        let answer = try Self.decode(json)
        guard case .app(let receipt) = answer.receipt else {
            Issue.record("Expected an app receipt")
            return
        }
        #expect(
            receipt.inApp.map(\.purchaseDate) == Array(repeating: Date(timeIntervalSince1970: 1_700_000_000), count: 3))
        let reread = try JSONDecoder().decode(AppleVerifyReceiptResponse.self, from: try JSONEncoder().encode(answer))
        let order = { (answer: AppleVerifyReceiptResponse) in
            VerifiedReceipt(response: answer, environment: .production)?.transactions.map(\.transactionID)
        }
        #expect(order(reread) == order(answer))
        #expect(order(answer) == ["1000000000000009", "1000000000000011", "1pending"])
        #expect(
            try Self.decode(Self.answer(purchaseDate: #""purchase_date_ms": "1700000000000.6""#)).receipt
                .map { receipt -> Date? in
                    if case .app(let app) = receipt { return app.inApp.first?.purchaseDate }
                    return nil
                } == Date(timeIntervalSince1970: 1_700_000_000.001))
    }
}
