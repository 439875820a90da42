import Foundation
import Hummingbird
import KioskCore

/// `POST /v1/receipts/verify` (what a proof of purchase entitles now, for restore) and `POST /v1/downloads` (a
/// grant for one product): decode the request, ask the ``GrantService``, encode its answer.
struct PurchaseRoutes {
    let grants: GrantService

    /// A receipt of 3 MiB plus the JSON around it.
    static let receiptBodyLimit = ReceiptVerifier.maximumReceiptLength + 16 * 1024

    func register(on router: Router<KioskRequestContext>) {
        router.post("/v1/receipts/verify") { request, context in
            let body = try await JSONIO.decodeBody(
                ReceiptVerificationRequest.self, from: request, limit: Self.receiptBodyLimit)
            return try JSONIO.response(try await grants.entitlements(for: body.proof, logger: context.logger))
        }
        router.post("/v1/downloads") { request, context in
            let body: GrantRequest
            do {
                body = try await JSONIO.decodeBody(GrantRequest.self, from: request, limit: Self.receiptBodyLimit)
            } catch let refusal as any APIResponseError {
                grants.recordRefusal(refusal)
                throw refusal
            }
            return try JSONIO.response(try await grants.grant(body, logger: context.logger))
        }
    }
}
