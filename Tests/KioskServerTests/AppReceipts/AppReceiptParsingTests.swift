import Crypto
import Foundation
import KioskCore
import SwiftASN1
import Testing
import X509

@testable import KioskStore

/// The local receipt reader against the four real receipts of `Fixtures/apple`: every field of `expected.json`,
/// and the BER of Xcode's receipts.
@Suite("AppReceipt parsing")
struct AppReceiptParsingTests {
    /// A date of `expected.json` (RFC 3339, or null).
    func date(_ value: Any?) throws -> Date? {
        guard let text = value as? String else { return nil }
        let date: Date = try #require(RFC3339.date(from: text))
        return date
    }

    @Test("Each receipt reads as expected.json says", arguments: AppReceiptFixture.allCases)
    func contents(fixture: AppReceiptFixture) throws {
        let expected = try fixture.expected()
        let document = try AppReceiptDocument.parse(base64: fixture.base64())
        let contents = document.contents
        let receipt = try #require(expected["receipt"] as? [String: Any])
        #expect(contents.bundleID == receipt["bundle_id"] as? String)
        #expect(contents.appVersion == receipt["app_version"] as? String)
        #expect(contents.creationDate == (try date(receipt["receipt_creation_date"])))
        #expect(contents.originalAppVersion == receipt["original_app_version"] as? String)
        #expect(contents.originalPurchaseDate == (try date(receipt["original_purchase_date"])))
        #expect(contents.expirationDate == (try date(receipt["expiration_date"])))
        #expect(contents.receiptType == expected["receipt_type_attr0"] as? String)
        #expect(contents.opaqueValue.isEmpty == false)
        #expect(contents.sha1Hash.count == 20)

        let inApp = try #require(expected["in_app"] as? [[String: Any]])
        #expect(contents.inApp.count == expected["in_app_count"] as? Int)
        try #require(contents.inApp.count == inApp.count)
        for (purchase, expected) in zip(contents.inApp, inApp) {
            #expect(purchase.productID == expected["product_id"] as? String)
            #expect(purchase.transactionID == expected["transaction_id"] as? String)
            #expect(purchase.originalTransactionID == expected["original_transaction_id"] as? String)
            #expect(purchase.purchaseDate == (try date(expected["purchase_date"])))
            #expect(purchase.originalPurchaseDate == (try date(expected["original_purchase_date"])))
            #expect(purchase.expiresDate == (try date(expected["expires_date"])))
            #expect(purchase.cancellationDate == (try date(expected["cancellation_date"])))
            #expect(purchase.quantity == expected["quantity"] as? Int)
            #expect(purchase.webOrderLineItemID == (expected["web_order_line_item_id"] as? NSNumber)?.int64Value)
            for absent in expected["attributes_absent"] as? [String] ?? [] {
                let value: Any? =
                    switch absent {
                    case "original_transaction_id": purchase.originalTransactionID
                    case "original_purchase_date": purchase.originalPurchaseDate
                    case "cancellation_date": purchase.cancellationDate
                    case "web_order_line_item_id": purchase.webOrderLineItemID
                    default: "unknown attribute \(absent)"
                    }
                #expect(value == nil, "\(absent)")
            }
        }
    }

    @Test(
        "Each receipt's envelope is the SignedData and chain expected.json describes",
        arguments: AppReceiptFixture.allCases)
    func envelope(fixture: AppReceiptFixture) throws {
        let expected = try fixture.expected()
        let der = try fixture.der()
        #expect(der.count == expected["der_length"] as? Int)
        #expect(SHA256.hash(data: der).hexString == expected["der_sha256"] as? String)

        let signedData = try AppReceiptDocument.parse(der: der).signedData
        let signature = try #require(expected["signature"] as? [String: Any])
        #expect(signedData.version == 1)
        #expect(signedData.digestAlgorithms == [TestOID.sha256])
        let signer = try #require(signedData.signerInfos.first)
        #expect(signedData.signerInfos.count == 1)
        #expect(signature["digest_algorithm"] as? String == "SHA-256")
        #expect(signer.digestAlgorithm == TestOID.sha256)
        let signatureAlgorithm = try #require(signature["signature_algorithm"] as? String)
        #expect(
            signer.signatureAlgorithm
                == (signatureAlgorithm.hasPrefix("sha256WithRSAEncryption")
                    ? TestOID.sha256WithRSA : TestOID.rsaEncryption))
        #expect((signer.signedAttributes != nil) == signature["signed_attributes"] as? Bool)
        #expect(signer.signature.count == 256)

        let chain = try #require(expected["chain"] as? [[String: Any]])
        #expect(
            signedData.certificates.map { SHA256.hash(data: $0).hexString } == chain.map { $0["sha256"] as? String })
        let leaf = try Certificate(derEncoded: Array(signedData.certificates[0]))
        #expect(String(leaf.serialNumber.bytes.hexString.trimmingPrefix("0")) == chain[0]["serial"] as? String)
        guard case .issuerAndSerialNumber(let issuer, let serialNumber) = signer.identifier else {
            Issue.record("the signer is not named by issuer and serial number")
            return
        }
        #expect(Array(serialNumber) == Array(leaf.serialNumber.bytes))
        #expect(try DistinguishedName(derEncoded: DER.parse(Array(issuer))) == leaf.issuer)
    }

    @Test(
        "DER receipts re-encode to themselves; BER ones to DER that reads the same",
        arguments: AppReceiptFixture.allCases)
    func reencoding(fixture: AppReceiptFixture) throws {
        let der = Array(try fixture.der())
        let reencoded = try ASN1Reader.read(der).derEncoding()
        let isBER = try #require(fixture.expected()["ber_indefinite_length"] as? Bool)
        #expect((reencoded != der) == isBER)
        let original = try AppReceiptDocument.parse(der: Data(der))
        let rewritten = try AppReceiptDocument.parse(der: Data(reencoded))
        #expect(rewritten.contents == original.contents)
        #expect(rewritten.signedData.certificates == original.signedData.certificates)
    }

    @Test("In-app purchases become Kiosk's transactions; an absent original transaction ID falls back to the ID")
    func storeTransactions() throws {
        let production = try AppReceiptDocument.parse(base64: AppReceiptFixture.production.base64()).contents
        let transactions = production.storeTransactions
        #expect(transactions.map(\.transactionID) == production.inApp.map(\.transactionID))
        let first = try #require(transactions.first)
        #expect(first.productID == "org.getpure.pure.Week")
        #expect(first.originalTransactionID == "340001196262039")
        #expect(first.webOrderLineItemID == "340000558053130")
        #expect(first.expiresDate == RFC3339.date(from: "2023-05-16T23:20:55Z"))
        #expect(first.isTrialPeriod == false)

        let xcode = try AppReceiptDocument.parse(base64: AppReceiptFixture.xcodeWithPurchases.base64()).contents
        let transaction = try #require(xcode.storeTransactions.first)
        #expect(transaction.transactionID == "0")
        #expect(transaction.originalTransactionID == "0")
        #expect(transaction.webOrderLineItemID == nil)
    }

    /// A receipt payload around `attributes`, in an unsigned SignedData, read back.
    func read(payload attributes: [[UInt8]]) throws(AppReceiptParseError) -> AppReceiptContents {
        let signedData = TestDER.sequence(
            TestDER.oid(AppReceiptSignedData.signedDataOID),
            TestDER.context(
                0,
                TestDER.sequence(
                    TestDER.integer(1), TestDER.set([]),
                    TestDER.sequence(
                        TestDER.oid(AppReceiptSignedData.dataOID),
                        TestDER.context(0, TestDER.octetString(TestDER.set(attributes)))),
                    TestDER.set([]))))
        return try AppReceiptDocument.parse(der: Data(signedData)).contents
    }

    /// The attributes every receipt needs, plus `extra`.
    func attributes(_ extra: [[UInt8]] = [], bundleID: String = "com.example.app") -> [[UInt8]] {
        [
            TestDER.attribute(2, TestDER.utf8(bundleID)), TestDER.attribute(3, TestDER.utf8("7")),
            TestDER.attribute(4, [1, 2, 3]), TestDER.attribute(5, Array(repeating: 9, count: 20)),
            TestDER.attribute(12, TestDER.ia5("2024-02-23T17:27:16Z")),
        ] + extra
    }

    @Test("Dates with a numeric offset (+0100, -03:00) read; empty ones are absent; unknown attributes are skipped")
    func datesAndUnknownAttributes() throws {
        let purchase = TestDER.set([
            TestDER.attribute(1702, TestDER.utf8("com.example.book")), TestDER.attribute(1703, TestDER.utf8("42")),
            TestDER.attribute(1704, TestDER.ia5("2024-02-23T18:27:16+0100")),
            TestDER.attribute(1706, TestDER.ia5("2024-02-23T14:27:16-03:00")),
            TestDER.attribute(1712, TestDER.ia5("")), TestDER.attribute(1705, TestDER.utf8("")),
            TestDER.attribute(9999, [0xFF, 0xFF]),
        ])
        let contents = try read(
            payload: attributes([
                TestDER.attribute(21, TestDER.ia5("")), TestDER.attribute(18, TestDER.ia5("2016-08-16T15:15:43+0000")),
                TestDER.attribute(17, purchase), TestDER.attribute(31_337, [0x00]),
            ]))
        let instant = RFC3339.date(from: "2024-02-23T17:27:16Z")
        #expect(contents.originalPurchaseDate == RFC3339.date(from: "2016-08-16T15:15:43Z"))
        #expect(contents.expirationDate == nil)
        let inApp = try #require(contents.inApp.first)
        #expect(inApp.purchaseDate == instant)
        #expect(inApp.originalPurchaseDate == instant)
        #expect(inApp.cancellationDate == nil)
        #expect(inApp.originalTransactionID == nil)
        #expect(inApp.quantity == 1)
        #expect(inApp.storeTransaction.originalTransactionID == "42")
    }

    @Test("A missing, duplicated or mistyped attribute is refused with its type")
    func attributeErrors() throws {
        #expect(throws: AppReceiptParseError.missingAttribute(type: 2)) {
            try read(payload: Array(attributes().dropFirst()))
        }
        #expect(throws: AppReceiptParseError.missingAttribute(type: 2)) {
            try read(payload: attributes(bundleID: ""))
        }
        #expect(throws: AppReceiptParseError.invalidAttribute(type: 2, reason: "it appears 2 times")) {
            try read(payload: attributes([TestDER.attribute(2, TestDER.utf8("com.example.other"))]))
        }
        #expect {
            try read(payload: attributes([TestDER.attribute(19, TestDER.integer(3))]))
        } throws: {
            ($0 as? AppReceiptParseError).map { if case .invalidAttribute(19, _) = $0 { true } else { false } } ?? false
        }
        #expect {
            try read(payload: attributes([TestDER.attribute(21, TestDER.ia5("tomorrow"))]))
        } throws: {
            ($0 as? AppReceiptParseError).map { if case .invalidAttribute(21, _) = $0 { true } else { false } } ?? false
        }
        let noProduct = TestDER.set([
            TestDER.attribute(1703, TestDER.utf8("1")), TestDER.attribute(1704, TestDER.ia5("2024-02-23T17:27:16Z")),
        ])
        #expect {
            try read(payload: attributes([TestDER.attribute(17, noProduct)]))
        } throws: {
            ($0 as? AppReceiptParseError).map { if case .invalidAttribute(17, _) = $0 { true } else { false } } ?? false
        }
    }

    @Test("BER: indefinite lengths and a content OCTET STRING in several constructed parts are read")
    func berConstructedContent() throws {
        let payload = TestDER.set(attributes())
        let parts = stride(from: 0, to: payload.count, by: 7).map {
            TestDER.octetString(payload[$0..<min($0 + 7, payload.count)])
        }
        let content = TestDER.indefinite(0x24, TestDER.indefinite(0x24, parts[0], parts[1]), parts[2...].flatMap { $0 })
        let ber = TestDER.indefinite(
            0x30, TestDER.oid(AppReceiptSignedData.signedDataOID),
            TestDER.indefinite(
                0xA0,
                TestDER.indefinite(
                    0x30, TestDER.integer(1), TestDER.set([TestDER.algorithm(TestOID.sha256)]),
                    TestDER.indefinite(
                        0x30, TestDER.oid(AppReceiptSignedData.dataOID), TestDER.indefinite(0xA0, content)),
                    TestDER.set([]))))
        let document = try AppReceiptDocument.parse(der: Data(ber))
        #expect(Array(document.signedData.content) == payload)
        #expect(document.contents.bundleID == "com.example.app")
    }

    @Test("Multi-byte tags read, and re-encode to themselves")
    func multiByteTags() throws {
        let element: [UInt8] = [0xBF, 0x81, 0x00, 0x03, 0x02, 0x01, 0x05]
        let node = try ASN1Reader.read(element)
        #expect(node.tag == ASN1Tag(tagClass: .contextSpecific, number: 128))
        #expect(try node.children.first?.integer("") == 5)
        #expect(try node.derEncoding() == element)
        #expect(throws: AppReceiptParseError.self) { try ASN1Reader.read([0x9F, 0x80, 0x01, 0x00]) }
        #expect(throws: AppReceiptParseError.self) { try ASN1Reader.read([0x9F, 0x1E, 0x00]) }
    }
}
