import Foundation
import KioskCore

/// The installation calls of the wire contract: which installations use a purchase, and removing one.
extension APIClient {
    /// `POST /v1/installations`: the installations using the purchase `proof` holds for `productID`.
    func installations(productID: String, proof: PurchaseProof) async throws(KioskError) -> InstallationList {
        let (list, _) = try await json(
            InstallationList.self, method: "POST", path: "/v1/installations",
            body: InstallationsRequest(proof: proof, productID: productID))
        guard let list else { throw .invalidResponse("empty installation list") }
        return list
    }

    /// `POST /v1/installations/remove`: removes `installationID` from the purchase, and lists those left.
    func removeInstallation(
        _ installationID: String, productID: String, proof: PurchaseProof
    ) async throws(KioskError) -> InstallationList {
        let (list, _) = try await json(
            InstallationList.self, method: "POST", path: "/v1/installations/remove",
            body: InstallationRemovalRequest(proof: proof, productID: productID, installationID: installationID))
        guard let list else { throw .invalidResponse("empty installation list") }
        return list
    }
}
