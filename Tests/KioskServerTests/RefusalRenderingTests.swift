import Foundation
import HTTPTypes
import KioskCore
import KioskStore
import Testing

@testable import KioskServer

/// Every domain refusal answers through the one rendering of ``JSONIO/errorResponse(_:)``.
@Suite("Refusal rendering")
struct RefusalRenderingTests {
    @Test func aRefusalSetsItsStatusAndHeaders() {
        let missing = JSONIO.errorResponse(ContentRefusal.tokenMissing)
        #expect(missing.status == .unauthorized)
        #expect(missing.headers[HTTPField.Name("WWW-Authenticate")!] == "Bearer")
        #expect(missing.headers[.contentType] == "application/json; charset=utf-8")

        let busy = JSONIO.errorResponse(ReceiptVerificationError.storeUnavailable(retryAfter: .seconds(2), status: nil))
        #expect(busy.status.code == 503)
        #expect(busy.headers[.retryAfter] == "2")

        let limit = JSONIO.errorResponse(
            GrantRefusal.installationLimit(installations: 3, removals: RemovalAllowance(left: 1, resetsAt: nil)))
        #expect(limit.status.code == 403)
        #expect(limit.headers[.retryAfter] == nil)

        // A code APIErrorCode does not list yet, with its own status.
        let crowded = JSONIO.errorResponse(SubchunkBusyRefusal.purchase(limit: 256))
        #expect(crowded.status == .tooManyRequests)
        #expect(crowded.headers[.retryAfter] == "1")
    }

    @Test func theStoreRefusalsKeepTheirCodesAndReasons() {
        #expect(SignedDataRefusal.signatureInvalid.errorCode == .transactionInvalid)
        #expect(SignedDataRefusal.signatureInvalid.errorReason == "signature")
        #expect(ReceiptVerificationError.environmentNotAccepted(.sandbox).errorReason == "environment")
        #expect(ReceiptVerificationError.storeMisconfigured(status: 21004).status.code == 500)
        #expect(EntitlementRefusal.wrongBundle(productID: "p", receiptBundleID: "b").errorCode == .receiptInvalid)
        #expect(GrantRefusal.notEntitled(.refunded(productID: "p")).errorCode == .notEntitled)
        #expect(ContentRefusal.token(.expired).status == .unauthorized)
        #expect(ContentRefusal.token(.outOfScope).status == .forbidden)
        #expect(SandboxRefusal.noSigningChain.status == .notFound)
    }
}
