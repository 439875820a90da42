import Foundation
import KioskCore
import Logging

/// Takes delivery reports (`POST /v1/deliveries`), with no HTTP: an installation says it installed a product
/// version, with the grant token that opened its download, and the ledger keeps it for the consumption answers.
///
/// The token proves the purchase: it must be one this server signed, for the product and version reported, and its
/// purchase must still stand (a refunded or revoked one is refused as content requests refuse it). An expired token
/// is accepted for ``expiredTokenGrace`` past its expiry: a report follows the download it opened, which may end
/// after the token expired, and a client that could not report at once tries again later. Who sent the bytes (Kiosk,
/// nginx, an object store) does not matter.
struct DeliveryService: Sendable {
    /// How long after its expiry a token still vouches for a report: a week.
    static let expiredTokenGrace: Duration = .seconds(7 * 86_400)

    let signer: GrantSigner
    let revocations: RevocationList
    let ledger: any Ledger
    let metrics: ServerMetrics
    let now: @Sendable () -> Date

    /// Records `report`, vouched for by `token`.
    /// - Throws: ``ContentRefusal`` for a token missing, invalid, expired past the grace, for another product or
    ///   version, or of a revoked purchase; `bad_request` for a field that is not an identifier; the ledger's errors.
    func record(_ report: DeliveryReportRequest, token: String?, logger: Logger) async throws -> DeliveryReportResponse
    {
        guard Identifiers.isValidProductID(report.productID) else {
            throw APIError.badRequest("'\(report.productID.prefix(64))' is not a valid product ID.")
        }
        guard Identifiers.isValidContentVersion(report.contentVersion) else {
            throw APIError.badRequest("'\(report.contentVersion.prefix(64))' is not a valid content version.")
        }
        guard GrantService.isValidInstallationID(report.installationID) else {
            throw APIError.badRequest("An installation ID is 1 to 128 letters, digits, '.', '_' or '-'.")
        }
        let claims = try claims(for: token, opening: report)
        let original = try await originalTransactionID(of: claims)
        let isNew = try await ledger.recordDelivery(
            DeliveryRecord(
                originalTransactionID: original, transactionID: claims.transactionID, productID: report.productID,
                contentVersion: report.contentVersion, installationID: report.installationID, reportedAt: now()))
        if isNew {
            logger.info(
                "delivery reported",
                metadata: ["product": "\(report.productID)", "version": "\(report.contentVersion)"])
        }
        return DeliveryReportResponse(status: isNew ? .recorded : .alreadyRecorded)
    }

    /// The claims of `token` when it vouches for `report`: signed here, not expired beyond the grace, for the
    /// reported product and version, of a purchase that still stands.
    private func claims(for token: String?, opening report: DeliveryReportRequest) throws(ContentRefusal)
        -> GrantClaims
    {
        guard let token, !token.isEmpty else { throw .tokenMissing }
        let claims: GrantClaims
        switch signer.verifySignature(token) {
        case .success(let verified): claims = verified
        case .failure(let refusal): throw .token(refusal)
        }
        let graceEnd = claims.expiresAt + Self.expiredTokenGrace.components.seconds
        guard Int64(now().timeIntervalSince1970) < graceEnd else { throw .token(.expired) }
        guard claims.opens(productID: report.productID, version: report.contentVersion) else {
            throw .token(.outOfScope)
        }
        if revocations.refuses(transactionID: claims.transactionID, originalTransactionID: claims.originalTransactionID)
        {
            metrics.recordRevokedTokenRefusal()
            throw .revoked
        }
        return claims
    }

    /// The purchase the token's transaction belongs to: named in the token, or (a token issued before tokens
    /// named it) as the ledger recorded it.
    private func originalTransactionID(of claims: GrantClaims) async throws -> String {
        if let original = claims.originalTransactionID { return original }
        return try await ledger.transaction(id: claims.transactionID)?.originalTransactionID ?? claims.transactionID
    }
}
