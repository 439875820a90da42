import Foundation
import HTTPTypes
import Hummingbird
import KioskCore

/// `POST /v1/receipts/verify` (what a proof of purchase entitles now, for restore) and `POST /v1/downloads` (a
/// grant for one product, gzipped when asked for): decode the request, ask the ``GrantService``, encode its answer.
struct PurchaseRoutes {
    let grants: GrantService

    func register(on router: Router<KioskRequestContext>) {
        router.post("/v1/receipts/verify") { request, context in
            let body = try await JSONIO.decodeBody(
                ReceiptVerificationRequest.self, from: request, limit: RequestBodyLimits.receipt)
            return try JSONIO.response(try await grants.entitlements(for: body.proof, logger: context.logger))
        }
        router.post("/v1/downloads") { request, context in
            let body: GrantRequest
            do {
                body = try await JSONIO.decodeBody(GrantRequest.self, from: request, limit: RequestBodyLimits.receipt)
            } catch let refusal as any APIResponseError {
                grants.recordRefusal(refusal)
                throw refusal
            }
            let grant = try await grants.grant(body, logger: context.logger)
            return try Self.response(grant, acceptEncoding: request.headers[.acceptEncoding])
        }
    }

    /// The grant's JSON, gzipped when the client accepts gzip (the file list's compressed form is cached per
    /// version, so this compresses only this request's fields).
    static func response(_ grant: IssuedGrant, acceptEncoding: String?) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .vary: "Accept-Encoding"]
        guard ContentNegotiation.acceptsGzip(acceptEncoding) else {
            return Response(status: .ok, headers: headers, body: ResponseBody(contentsOf: grant.json))
        }
        headers[.contentEncoding] = "gzip"
        return Response(status: .ok, headers: headers, body: ResponseBody(contentsOf: try grant.gzip()))
    }
}
