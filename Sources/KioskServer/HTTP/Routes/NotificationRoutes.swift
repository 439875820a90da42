import Hummingbird
import KioskCore
import KioskStore

/// `POST /v1/notifications/appstore`: App Store Server Notifications V2 (`{"signedPayload": "<JWS>"}`), verified
/// like signed transactions and applied to the ledger. Answers 200 with what was done (also for a duplicate), so the
/// App Store stops resending; a payload that does not verify gets `transaction_invalid`.
struct NotificationRoutes {
    let processor: NotificationProcessor

    /// A notification's JWS embeds two more (transaction and renewal information); a few tens of kilobytes.
    static let bodyLimit = 256 * 1024

    func register(on router: Router<KioskRequestContext>) {
        router.post("/v1/notifications/appstore") { request, context in
            let body = try await JSONIO.decodeBody(SignedNotificationBody.self, from: request, limit: Self.bodyLimit)
            return try JSONIO.response(
                try await processor.process(signedPayload: body.signedPayload, logger: context.logger))
        }
    }
}
