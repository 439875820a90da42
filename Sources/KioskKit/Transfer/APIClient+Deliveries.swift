import Foundation
import KioskCore

/// A delivery report to send: a product version this installation installed, and the token of the grant that
/// opened its download, which vouches for it.
struct DeliveryReport: Sendable, Hashable {
    var productID: String
    var contentVersion: String
    var token: String
}

/// The delivery call of the wire contract.
extension APIClient {
    /// `POST /v1/deliveries`: tells the server that this installation installed `report`'s product version.
    func reportDelivery(_ report: DeliveryReport) async throws(KioskError) -> DeliveryReportResponse {
        let (answer, _) = try await json(
            DeliveryReportResponse.self, method: "POST", path: "/v1/deliveries",
            body: DeliveryReportRequest(
                productID: report.productID, contentVersion: report.contentVersion,
                installationID: installationID ?? ""),
            headers: [BearerAuthorization.name: BearerAuthorization.value(report.token)])
        guard let answer else { throw .invalidResponse("empty delivery report answer") }
        return answer
    }
}
