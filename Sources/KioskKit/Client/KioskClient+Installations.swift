import Foundation
import KioskCore

/// The installations using a purchase: the server serves one purchase to a limited number of installations (each
/// cache root is one: ``installationID``) and refuses a new one beyond with
/// ``KioskError/server(status:code:message:retryAfter:)`` of code `installation_limit`. These calls let the app show
/// the user which installations use the purchase and remove one (a device the user no longer has), so that this
/// installation can take its place.
///
/// Removals are limited per purchase in a rolling window (``InstallationList/removalsLeft``,
/// ``InstallationList/removalsResetAt``); beyond, the server refuses with code `removal_limit` (403, with
/// `Retry-After`).
extension KioskClient {
    /// The installations using the purchase that `proof` holds for `productID`, first seen first, with the most
    /// allowed and the removals left.
    /// - Throws: the refusals a grant request meets for the proof and the product (`not_entitled`,
    ///   `receipt_invalid`, `not_found`, …), ``KioskError/clientClosed`` after ``close()``.
    public func installations(productID: String, proof: PurchaseProof) async throws(KioskError) -> InstallationList {
        try ensureOpen()
        return try await api.installations(productID: productID, proof: proof)
    }

    /// Removes the installation `installationID` from the purchase that `proof` holds for `productID`, and returns
    /// the installations left. The removed installation is admitted again (as a new one) if it asks for a grant.
    /// - Throws: `not_found` (404) when the purchase has no such installation, `removal_limit` (403, with
    ///   `retryAfter`) when it has no removal left, the refusals of ``installations(productID:proof:)``, and
    ///   ``KioskError/clientClosed`` after ``close()``.
    public func removeInstallation(
        _ installationID: String, productID: String, proof: PurchaseProof
    ) async throws(KioskError) -> InstallationList {
        try ensureOpen()
        return try await api.removeInstallation(installationID, productID: productID, proof: proof)
    }
}
