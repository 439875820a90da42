import Foundation
import Hummingbird
import KioskCore

/// `POST /v1/deliveries` (an installation installed a product version): decode the report and its bearer token, ask
/// the ``DeliveryService``, encode its answer.
struct DeliveryRoutes {
    let deliveries: DeliveryService
    /// The largest body accepted (``ServerConfiguration/maxJSONBodySize``).
    let bodyLimit: Int

    func register(on router: Router<KioskRequestContext>) {
        router.post("/v1/deliveries") { request, context in
            let body = try await JSONIO.decodeBody(DeliveryReportRequest.self, from: request, limit: bodyLimit)
            return try JSONIO.response(
                try await deliveries.record(body, token: request.bearerToken, logger: context.logger))
        }
    }
}
