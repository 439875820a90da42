import KioskStore
import Testing

@Suite("Receipt verification errors")
struct ReceiptVerificationErrorTests {
    @Test("Retry-After is whole seconds, at least one, and only for store_unavailable")
    func retryAfter() {
        #expect(ReceiptVerificationError.storeUnavailable(retryAfter: .zero, status: nil).retryAfterSeconds == 1)
        #expect(
            ReceiptVerificationError.storeUnavailable(retryAfter: .milliseconds(2001), status: nil).retryAfterSeconds
                == 3)
        #expect(
            ReceiptVerificationError.storeUnavailable(retryAfter: .seconds(4), status: 21009).retryAfterSeconds == 4)
        #expect(ReceiptVerificationError.receiptInvalid(status: 21003).retryAfterSeconds == nil)
    }

    @Test("The store's status is exposed for logs and metrics")
    func storeStatus() {
        #expect(ReceiptVerificationError.payloadTooLarge.storeStatus == nil)
        #expect(ReceiptVerificationError.receiptInvalid(status: 21010).storeStatus == 21010)
        #expect(ReceiptVerificationError.storeMisconfigured(status: nil, httpStatus: 403).storeStatus == nil)
    }
}
