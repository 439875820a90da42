import Foundation
import KioskCore
import Testing

@testable import KioskStore

/// Hostile receipts: each must end in `AppReceiptParseError`, never in a trap.
@Suite("AppReceipt hostile input")
struct AppReceiptHostileInputTests {
    /// Whether reading `bytes` is refused as malformed ASN.1 with a detail containing `detail`.
    func refusesASN1(_ bytes: [UInt8], mentioning detail: String) -> Bool {
        do throws(AppReceiptParseError) {
            _ = try AppReceiptDocument.parse(der: Data(bytes))
            return false
        } catch {
            guard case .malformedASN1(let message) = error else { return false }
            return message.contains(detail)
        }
    }

    @Test("Every truncation of each receipt is refused", arguments: AppReceiptFixture.allCases)
    func truncations(fixture: AppReceiptFixture) throws {
        let der = try fixture.der()
        var accepted: [Int] = []
        for length in 0..<der.count where (try? AppReceiptDocument.parse(der: der.prefix(length))) != nil {
            accepted.append(length)
        }
        #expect(accepted.isEmpty)
    }

    @Test("Indefinite lengths nested deeper than the limit are refused; at the limit they read")
    func deepNesting() throws {
        func nested(_ depth: Int) -> [UInt8] {
            Array(repeating: [0x30, 0x80], count: depth).flatMap { $0 } + [0x05, 0x00]
                + Array(repeating: [0x00, 0x00], count: depth).flatMap { $0 }
        }
        #expect(throws: Never.self) { try ASN1Reader.read(nested(ASN1Reader.maximumDepth)) }
        #expect(refusesASN1(nested(ASN1Reader.maximumDepth + 1), mentioning: "deeper"))
        #expect(refusesASN1(nested(100_000), mentioning: "deeper"))
        #expect(refusesASN1(Array(repeating: [0x30, 0x80], count: 50_000).flatMap { $0 }, mentioning: "deeper"))
    }

    @Test("Lengths past the input, long length fields and reserved forms are refused")
    func lengths() {
        #expect(refusesASN1([0x30, 0x05, 0x02, 0x01, 0x00], mentioning: "claims 5"))
        #expect(refusesASN1([0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF, 0x00], mentioning: "claims 4294967295"))
        #expect(refusesASN1([0x30, 0x03, 0x02, 0x05, 0x00], mentioning: "claims 5"))
        #expect(refusesASN1([0x30, 0x85, 0x00, 0x00, 0x00, 0x00, 0x02, 0x05, 0x00], mentioning: "5 octets"))
        #expect(refusesASN1([0x30, 0x89] + Array(repeating: 0xFF, count: 9), mentioning: "9 octets"))
        #expect(refusesASN1([0x30, 0xFF], mentioning: "reserved"))
        #expect(refusesASN1([0x04, 0x80, 0x00, 0x00], mentioning: "primitive"))
        #expect(refusesASN1([0x30, 0x80, 0x05, 0x00], mentioning: "no end-of-contents"))
        #expect(refusesASN1([0x30, 0x02, 0x00, 0x00], mentioning: "end-of-contents"))
        #expect(refusesASN1([0x05, 0x00, 0x05, 0x00], mentioning: "follow"))
        #expect(refusesASN1([0x30, 0x82, 0x00], mentioning: "truncated"))
        #expect(refusesASN1([], mentioning: "truncated"))
    }

    @Test("Random bytes and random corruptions of the receipts never trap")
    func randomInput() throws {
        var generator = SplitMix64(seed: 0x5EED_0F_A99_2EC)
        for _ in 0..<2000 {
            let count = Int.random(in: 0...400, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if !bytes.isEmpty, Bool.random(using: &generator) { bytes[0] = 0x30 }
            #expect(throws: AppReceiptParseError.self) { try AppReceiptDocument.parse(der: Data(bytes)) }
        }
        for fixture in AppReceiptFixture.allCases {
            let der = try fixture.der()
            for _ in 0..<300 {
                var bytes = Array(der)
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                }
                _ = try? AppReceiptDocument.parse(der: Data(bytes))
            }
        }
    }

    @Test("Oversized and non-base64 receipts are refused before reading")
    func sizeAndEncoding() {
        let limit = AppReceiptDocument.maximumBase64Length
        #expect(throws: AppReceiptParseError.tooLarge(byteCount: limit + 4, limit: limit)) {
            try AppReceiptDocument.parse(base64: String(repeating: "MIIA", count: limit / 4 + 1))
        }
        let derLimit = AppReceiptDocument.maximumDERLength
        #expect(throws: AppReceiptParseError.tooLarge(byteCount: derLimit + 1, limit: derLimit)) {
            try AppReceiptDocument.parse(der: Data(count: derLimit + 1))
        }
        #expect(throws: AppReceiptParseError.notBase64) { try AppReceiptDocument.parse(base64: "not base64!") }
        #expect(throws: AppReceiptParseError.self) { try AppReceiptDocument.parse(base64: "") }
    }

    @Test("Well-formed ASN.1 that is not a receipt is refused as unexpected structure")
    func wrongStructure() {
        let notSignedData = TestDER.sequence(TestDER.oid("1.2.840.113549.1.7.1"), TestDER.context(0, TestDER.null))
        #expect {
            try AppReceiptDocument.parse(der: Data(notSignedData))
        } throws: {
            if case .unexpectedStructure = $0 as? AppReceiptParseError { true } else { false }
        }
        #expect(throws: AppReceiptParseError.self) { try AppReceiptDocument.parse(der: Data(TestDER.integer(1))) }
    }
}
