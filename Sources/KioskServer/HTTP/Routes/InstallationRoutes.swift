import Foundation
import Hummingbird
import KioskCore

/// `POST /v1/installations` (which installations use a purchase) and `POST /v1/installations/remove` (remove one):
/// decode the request, ask the ``InstallationService``, encode its ``InstallationList``.
struct InstallationRoutes {
    let installations: InstallationService

    func register(on router: Router<KioskRequestContext>) {
        router.post("/v1/installations") { request, context in
            let body = try await JSONIO.decodeBody(
                InstallationsRequest.self, from: request, limit: RequestBodyLimits.receipt)
            return try JSONIO.response(try await installations.installations(body, logger: context.logger))
        }
        router.post("/v1/installations/remove") { request, context in
            let body = try await JSONIO.decodeBody(
                InstallationRemovalRequest.self, from: request, limit: RequestBodyLimits.receipt)
            return try JSONIO.response(try await installations.remove(body, logger: context.logger))
        }
    }
}
