import KioskServer
import KioskStore
import Testing

@Suite("Receipt verification errors: the API envelope")
struct ReceiptVerificationErrorEnvelopeTests {
    @Test(
        "Each error has its API code, HTTP status and message",
        arguments: [
            (
                ReceiptVerificationError.payloadTooLarge, "payload_too_large", 413,
                "The receipt is larger than 3 MiB, the most the store accepts."
            ),
            (
                .receiptMalformed(status: nil), "receipt_malformed", 400,
                "The receipt data is empty or not valid base64."
            ),
            (
                .receiptMalformed(status: 21002), "receipt_malformed", 400,
                "The store could not read this receipt (status 21002)."
            ),
            (.receiptInvalid(status: 21003), "receipt_invalid", 403, "The store rejected this receipt (status 21003)."),
            (
                .storeUnavailable(retryAfter: .seconds(2), status: 21005), "store_unavailable", 503,
                "The store is temporarily unavailable (status 21005); try again in 2 seconds."
            ),
            (
                .storeUnavailable(retryAfter: .milliseconds(250), status: nil), "store_unavailable", 503,
                "The store could not be reached; try again in 1 second."
            ),
            (
                .storeMisconfigured(status: 21004), "store_misconfigured", 500,
                "The store rejected the server's shared secret (status 21004); an operator must check it."
            ),
            (
                .storeMisconfigured(status: 21000), "store_misconfigured", 500,
                "The store refused the server's request (status 21000); an operator must check the setup."
            ),
            (
                .storeMisconfigured(status: nil, httpStatus: 404), "store_misconfigured", 500,
                "The store answered HTTP 404; an operator must check the store URLs."
            ),
        ]
    )
    func envelope(error: ReceiptVerificationError, code: String, httpStatus: Int, message: String) {
        #expect(error.errorCode.rawValue == code)
        #expect(error.status.code == httpStatus)
        #expect(error.message == message)
        #expect(error.description == "\(code): \(message)")
    }
}
