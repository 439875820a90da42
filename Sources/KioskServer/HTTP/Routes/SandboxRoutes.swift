import Foundation
import HTTPTypes
import Hummingbird
import KioskCore

/// The sandbox store's endpoints (`/sandbox/…`), served only with `--store sandbox`.
struct SandboxRoutes {
    let store: SandboxStore
    /// The verifier whose cached answers a refund makes stale.
    let verifier: ReceiptVerifier
    let bodyLimit: Int
    /// Where the sandbox store's notifications are delivered: the same processing as
    /// `POST /v1/notifications/appstore`.
    let notifications: NotificationProcessor
    /// Its App Store Server API, under `/sandbox/api` (the sandbox environment).
    let api: SandboxAppStoreAPI

    /// The prefix of the sandbox store's App Store Server API: `--app-store-sandbox-api-url http://HOST:PORT/sandbox/api`
    /// sends a server's API calls to it over HTTP.
    static let apiPrefix = "/sandbox/api"

    func register(on router: Router<KioskRequestContext>) {
        for method in [HTTPRequest.Method.get, .post, .put] {
            router.on("\(Self.apiPrefix)/**", method: method) { request, _ in
                let body = try await JSONIO.readBody(request, limit: NotificationRoutes.bodyLimit)
                var query: [String: String] = [:]
                for (name, value) in request.uri.queryParameters { query[String(name)] = String(value) }
                let answer = await api.answer(
                    SandboxAppStoreAPI.Request(
                        method: method.rawValue, path: String(request.uri.path.dropFirst(Self.apiPrefix.count)),
                        query: query, authorization: request.headers[.authorization], body: Data(buffer: body),
                        environment: .sandbox))
                var headers = HTTPFields()
                for (name, value) in answer.headers {
                    if let field = HTTPField.Name(name) { headers[field] = value }
                }
                return Response(
                    status: .init(code: answer.status), headers: headers,
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
            }
        }
        router.post("/sandbox/purchases") { request, _ in
            let purchase = try await JSONIO.decodeBody(SandboxPurchaseRequest.self, from: request, limit: bodyLimit)
            return try JSONIO.response(try await store.purchase(purchase), status: .created)
        }
        router.post("/sandbox/refunds") { request, _ in
            let refund = try await JSONIO.decodeBody(SandboxRefundRequest.self, from: request, limit: bodyLimit)
            let answer = try await store.refund(refund)
            await verifier.invalidateCache()
            return try JSONIO.response(answer)
        }
        router.post("/sandbox/notifications") { request, context in
            let body = try await JSONIO.decodeBody(SandboxNotificationRequest.self, from: request, limit: bodyLimit)
            let signedPayload = try await store.notification(for: body)
            await verifier.invalidateCache()
            // Not delivered: the server missed it, and catches up from the notification history.
            guard body.deliver ?? true else {
                return try JSONIO.response(SandboxNotificationResponse(signedPayload: signedPayload, result: nil))
            }
            let result = try await notifications.process(signedPayload: signedPayload, logger: context.logger)
            return try JSONIO.response(SandboxNotificationResponse(signedPayload: signedPayload, result: result))
        }
        router.get("/sandbox/consumption/:transaction_id") { _, context in
            let transactionID = try context.parameters.require("transaction_id")
            return try JSONIO.response(try await store.consumptionAnswers(for: transactionID))
        }
        // Apple's contract: always HTTP 200, the outcome in `status`. This endpoint is the sandbox environment.
        router.post("/sandbox/verifyReceipt") { request, _ in
            let body = try await JSONIO.readBody(request, limit: RequestBodyLimits.receipt)
            let answer = try await store.verifyReceipt(body: Data(buffer: body), environment: .sandbox)
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(answer))))
        }
    }
}
