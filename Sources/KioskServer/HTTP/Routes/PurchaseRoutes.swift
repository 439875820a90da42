import Foundation
import Hummingbird
import KioskCore
import Logging

/// `POST /v1/receipts/verify` (what a proof of purchase entitles now, for restore) and `POST /v1/downloads` (a
/// grant for one product): both take a receipt or a StoreKit 2 signed transaction, record its transactions in the
/// ledger and apply the entitlement policy to what the ledger knows of those purchases.
struct PurchaseRoutes {
    let catalog: ContentCatalog
    let proofs: ProofVerifier
    let policy: EntitlementPolicy
    let ledger: any Ledger
    let signer: GrantSigner
    let metrics: ServerMetrics
    let grantLifetime: Duration
    /// The most installations one purchase serves grants to.
    let maxInstallations: Int
    let now: @Sendable () -> Date

    /// A receipt of 3 MiB plus the JSON around it.
    static let receiptBodyLimit = ReceiptVerifier.maximumReceiptLength + 16 * 1024

    func register(on router: Router<KioskRequestContext>) {
        router.post("/v1/receipts/verify") { request, context in
            try await self.verifyReceipt(request, logger: context.logger)
        }
        router.post("/v1/downloads") { request, context in try await self.grant(request, logger: context.logger) }
    }

    /// What the entitlement policy needs of every catalog product (built once per catalog snapshot).
    private func entitlementProducts() -> [String: EntitlementProduct] { catalog.snapshot.entitlementProducts }

    func verifyReceipt(_ request: Request, logger: Logger) async throws -> Response {
        let body = try await JSONIO.decodeBody(
            ReceiptVerificationRequest.self, from: request, limit: Self.receiptBodyLimit)
        let receipt = try await proofs.verify(body.proof, logger: logger)
        let active = policy.activeEntitlements(receipt: receipt, products: entitlementProducts(), now: now())
        let entitlements = active.map { entitled in
            let transaction = entitled.transaction
            // An issue a subscription unlocked is kept for good: it has no end.
            return Entitlement(
                productID: entitled.productID, transactionID: transaction.transactionID,
                originalTransactionID: transaction.originalTransactionID, purchaseDate: transaction.purchaseDate,
                expiresDate: entitled.productID == transaction.productID ? transaction.expiresDate : nil,
                quantity: transaction.quantity)
        }
        return try JSONIO.response(
            EntitlementsResponse(environment: receipt.environment.rawValue, entitlements: entitlements))
    }

    func grant(_ request: Request, logger: Logger) async throws -> Response {
        do {
            let body = try await JSONIO.decodeBody(GrantRequest.self, from: request, limit: Self.receiptBodyLimit)
            guard Identifiers.isValidProductID(body.productID) else {
                throw APIError.badRequest("'\(body.productID.prefix(64))' is not a valid product ID.")
            }
            // Required, so that leaving it out cannot get past the installation cap.
            guard let installationID = body.installationID else {
                throw APIError.badRequest(
                    "A grant request needs an installation_id: a stable ID of the app installation asking (KioskKit "
                        + "sends one).")
            }
            guard Self.isValidInstallationID(installationID) else {
                throw APIError.badRequest("An installation ID is 1 to 128 letters, digits, '.', '_' or '-'.")
            }
            guard let product = catalog.snapshot.products[body.productID] else {
                throw APIError.notFound("There is no product '\(body.productID)'.")
            }
            let receipt = try await proofs.verify(body.proof, logger: logger)
            let transaction: StoreTransaction
            switch policy.evaluate(
                productID: product.info.productID, products: entitlementProducts(), receipt: receipt, now: now())
            {
            case .success(let found): transaction = found
            case .failure(let refusal): throw refusal
            }
            try await admit(installationID, for: transaction, logger: logger)
            let expiresAt = now().addingTimeInterval(grantLifetime.timeInterval)
            let token = signer.sign(
                GrantClaims(
                    productID: product.info.productID, contentVersion: product.info.contentVersion,
                    transactionID: transaction.transactionID, expiresAt: Int64(expiresAt.timeIntervalSince1970),
                    originalTransactionID: transaction.originalTransactionID))
            let grant = Grant(
                productID: product.info.productID, contentVersion: product.info.contentVersion,
                totalLength: product.contentLength, expiresAt: expiresAt, token: token,
                files: product.files.map { file in
                    GrantFile(
                        path: file.path, length: file.length, sha256: file.sha256,
                        url: Self.contentURL(
                            product: product.info.productID, version: product.info.contentVersion, path: file.path))
                })
            metrics.recordGrant(refusal: nil)
            logger.info(
                "grant issued",
                metadata: [
                    "product": "\(grant.productID)", "version": "\(grant.contentVersion)",
                    "environment": "\(receipt.environment.rawValue)",
                ])
            return try JSONIO.response(grant)
        } catch let error as any APIResponseError {
            metrics.recordGrant(refusal: error.errorCode.rawValue)
            throw error
        }
    }

    /// Registers the installation for the purchase paying for the grant, or refuses it beyond the cap.
    private func admit(_ installationID: String, for transaction: StoreTransaction, logger: Logger) async throws {
        let admission = try await ledger.admitInstallation(
            installationID, originalTransactionID: transaction.originalTransactionID, limit: maxInstallations,
            at: now())
        guard case .refused(let count) = admission else { return }
        metrics.recordInstallationRefusal()
        logger.notice("installation limit reached", metadata: ["installations": "\(count)"])
        throw APIError(
            .installationLimit,
            "This purchase is already used on \(count) installations, the most allowed. "
                + "Remove it from another device or contact support.")
    }

    /// 1 to 128 ASCII letters, digits, `.`, `_` or `-` (a UUID fits).
    static func isValidInstallationID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 128
            && text.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0))
            }
    }

    /// `/v1/content/<product>/<version>/<path>` with each path segment percent-encoded.
    static func contentURL(product: String, version: String, path: String) -> String {
        let encoded = path.split(separator: "/").map {
            String($0).addingPercentEncoding(
                withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? String($0)
        }
        return "/v1/content/\(product)/\(version)/" + encoded.joined(separator: "/")
    }
}

extension ProductKind {
    /// The entitlement rules' name for a catalog product type.
    init(_ type: ProductType) {
        switch type {
        case .consumable: self = .consumable
        case .nonConsumable: self = .nonConsumable
        case .autoRenewable: self = .autoRenewable
        case .nonRenewing: self = .nonRenewing
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    var timeInterval: TimeInterval {
        TimeInterval(components.seconds) + TimeInterval(components.attoseconds) / 1e18
    }
}
