import Foundation
import KioskCore
import KioskStore
import Logging

/// Issues grants and answers restores, with no HTTP: verifies a proof of purchase (recording its transactions in
/// the ledger) and applies the entitlement policy (``PurchaseCheck``), admits the installation under the cap
/// (``InstallationService``), and signs a grant for the product's current version.
///
/// Refusals are thrown as domain errors that render themselves (``APIResponseError``): ``GrantRefusal``, and the
/// store's ``ReceiptVerificationError`` or ``SignedDataRefusal`` for a proof that does not verify.
struct GrantService: Sendable {
    /// Checks the proof against the product (shared with ``InstallationService``).
    let purchases: PurchaseCheck
    /// Admits the installation asking under the cap.
    let installations: InstallationService
    let signer: GrantSigner
    let metrics: ServerMetrics
    /// How long a grant's token opens content.
    let grantLifetime: Duration
    /// The object store whose presigned URLs grants carry (`--offload s3:…`); nil when Kiosk sends the bytes.
    var offload: S3ContentOffload? = nil
    /// Reads the customer's whole history at restore (the App Store Server API); nil without the API.
    var history: HistoryRestore? = nil
    let now: @Sendable () -> Date

    /// A grant for `request.productID`, counted in the metrics as issued or refused with its code.
    func grant(_ request: GrantRequest, logger: Logger) async throws -> IssuedGrant {
        do {
            let grant = try await issue(request, logger: logger)
            metrics.recordGrant(refusal: nil)
            return grant
        } catch let refusal as any APIResponseError {
            recordRefusal(refusal)
            throw refusal
        }
    }

    /// Counts a grant request refused before it reached the service (a body that does not decode).
    func recordRefusal(_ refusal: any APIResponseError) {
        metrics.recordGrant(refusal: refusal.errorCode.rawValue)
    }

    /// What `proof` entitles to now, for restore. An issue a subscription unlocked is kept for good: it has no end.
    ///
    /// With ``history``, a proof restores the customer's whole history: every purchase Apple lists for the account
    /// that made it (revoked ones excluded by the policy), not only those the app sent; when Apple cannot be
    /// reached, the proof alone answers.
    func entitlements(for proof: PurchaseProof, logger: Logger) async throws -> EntitlementsResponse {
        var receipt = try await purchases.proofs.verify(proof, logger: logger)
        if let history, let original = receipt.transactions.first?.originalTransactionID,
            let purchases = try await history.purchases(
                of: original, environment: receipt.environment, logger: logger)
        {
            receipt = try await self.purchases.proofs.standing(receipt, adding: purchases)
        }
        let active = purchases.policy.activeEntitlements(
            receipt: receipt, products: purchases.catalog.snapshot.entitlements, now: now())
        let entitlements = active.map { entitled in
            let transaction = entitled.transaction
            return Entitlement(
                productID: entitled.productID, transactionID: transaction.transactionID,
                originalTransactionID: transaction.originalTransactionID, purchaseDate: transaction.purchaseDate,
                expiresDate: entitled.productID == transaction.productID ? transaction.expiresDate : nil,
                quantity: transaction.quantity)
        }
        return EntitlementsResponse(environment: receipt.environment.rawValue, entitlements: entitlements)
    }

    private func issue(_ request: GrantRequest, logger: Logger) async throws -> IssuedGrant {
        // Required, so that leaving it out cannot get past the installation cap.
        guard let installationID = request.installationID else { throw GrantRefusal.installationIDMissing }
        guard Self.isValidInstallationID(installationID) else { throw GrantRefusal.invalidInstallationID }
        let purchase = try await purchases.purchase(of: request.productID, proof: request.proof, logger: logger)
        let (snapshot, product, receipt, transaction) =
            (purchase.snapshot, purchase.product, purchase.receipt, purchase.transaction)
        try await installations.admit(
            installationID, originalTransactionID: transaction.originalTransactionID, logger: logger)
        let issuedAt = now()
        let expiresAt = issuedAt.addingTimeInterval(grantLifetime.timeInterval)
        let token = signer.sign(
            GrantClaims(
                productID: product.info.productID, contentVersion: product.info.contentVersion,
                transactionID: transaction.transactionID, expiresAt: Int64(expiresAt.timeIntervalSince1970),
                originalTransactionID: transaction.originalTransactionID))
        // The file list is the version's, encoded once (once per signing window with presigned URLs); only this
        // request's fields are encoded here.
        let files: GrantFileList
        var grantExpiresAt = expiresAt
        if let offload {
            let signedAt = offload.signingTime(for: issuedAt)
            files = try snapshot.grantFiles.list(
                for: product, variant: "s3 \(Int64(signedAt.timeIntervalSince1970))",
                encode: { try GrantFileList(product: $0, presignedBy: offload, at: signedAt) })
            // The client renews the grant, and with it the URLs, before they expire.
            grantExpiresAt = min(expiresAt, offload.expiry(ofURLsSignedAt: signedAt))
        } else {
            files = try snapshot.grantFiles.list(for: product)
        }
        let grant = try IssuedGrant(
            fields: Grant(
                productID: product.info.productID, contentVersion: product.info.contentVersion,
                totalLength: product.contentLength, expiresAt: grantExpiresAt, token: token, files: [],
                // With a store, every byte comes from it: no pack, which only Kiosk serves.
                chunking: files.chunking, pack: offload == nil ? files.grantPack(for: product) : nil,
                subchunks: files.grantSubchunks(for: product)),
            files: files)
        logger.info(
            "grant issued",
            metadata: [
                "product": "\(grant.productID)", "version": "\(grant.contentVersion)",
                "environment": "\(receipt.environment.rawValue)",
            ])
        return grant
    }

    /// 1 to 128 ASCII letters, digits, `.`, `_` or `-` (a UUID fits).
    static func isValidInstallationID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 128
            && text.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0))
            }
    }
}
