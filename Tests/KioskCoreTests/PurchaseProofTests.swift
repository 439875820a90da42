import Foundation
import KioskCore
import Testing

@Suite("Wire: proofs of purchase")
struct PurchaseProofTests {
    @Test func grantRequestsCarryEitherProof() throws {
        let receipt = try KioskJSON.decode(
            GrantRequest.self, from: Data(#"{"receipt-data": "abc", "product_id": "a.b"}"#.utf8))
        #expect(receipt.proof == .receipt("abc"))
        #expect(receipt.installationID == nil)
        let signed = try KioskJSON.decode(
            GrantRequest.self,
            from: Data(#"{"signed_transaction": "x.y.z", "product_id": "a.b", "installation_id": "i-1"}"#.utf8))
        #expect(signed.proof == .signedTransaction("x.y.z"))
        #expect(signed.installationID == "i-1")
        let roundTrip = try KioskJSON.decode(GrantRequest.self, from: try KioskJSON.encode(signed))
        #expect(roundTrip == signed)
        let encoded = String(
            decoding: try KioskJSON.encode(GrantRequest(receiptData: "r", productID: "a.b")), as: UTF8.self)
        #expect(encoded == #"{"product_id":"a.b","receipt-data":"r"}"#)
    }

    @Test func exactlyOneProof() {
        for body in [
            #"{"product_id": "a.b"}"#, #"{"receipt-data": "r", "signed_transaction": "s", "product_id": "a.b"}"#,
        ] {
            #expect(throws: WireFormatError.self) { try KioskJSON.decode(GrantRequest.self, from: Data(body.utf8)) }
            #expect(throws: WireFormatError.self) {
                try KioskJSON.decode(ReceiptVerificationRequest.self, from: Data(body.utf8))
            }
        }
        #expect(throws: DecodingError.self) {
            try KioskJSON.decode(GrantRequest.self, from: Data(#"{"signed_transaction": "s"}"#.utf8))
        }
    }

    @Test func newErrorCodes() {
        #expect(APIErrorCode.transactionInvalid.httpStatus == 403)
        #expect(APIErrorCode.transactionRevoked.httpStatus == 403)
        #expect(APIErrorCode.installationLimit.httpStatus == 403)
        let envelope = APIErrorEnvelope(code: .transactionInvalid, message: "m")
        #expect(!String(decoding: try! KioskJSON.encode(envelope), as: UTF8.self).contains("reason"))
    }
}
