import Foundation
import Hummingbird
import KioskCore
import Logging

/// `POST /v1/receipts/verify` (what a receipt entitles now, for restore) and `POST /v1/downloads` (a grant for one
/// product): both verify the receipt with the store, record its transactions in the ledger and apply the
/// entitlement policy.
struct PurchaseRoutes {
    let catalog: ContentCatalog
    let verifier: ReceiptVerifier
    let policy: EntitlementPolicy
    let ledger: any Ledger
    let signer: GrantSigner
    let metrics: ServerMetrics
    let grantLifetime: Duration
    let now: @Sendable () -> Date

    /// A receipt of 3 MiB plus the JSON around it.
    static let receiptBodyLimit = ReceiptVerifier.maximumReceiptLength + 16 * 1024

    func register(on router: Router<KioskRequestContext>) {
        router.post("/v1/receipts/verify") { request, context in
            try await self.verifyReceipt(request, logger: context.logger)
        }
        router.post("/v1/downloads") { request, context in try await self.grant(request, logger: context.logger) }
    }

    func verifyReceipt(_ request: Request, logger: Logger) async throws -> Response {
        let body = try await JSONIO.decodeBody(ReceiptVerificationRequest.self, from: request, limit: Self.receiptBodyLimit)
        let receipt = try await verified(body.receiptData, logger: logger)
        let snapshot = catalog.snapshot
        let kinds = snapshot.products.mapValues { ProductKind($0.info.type) }
        let entitlements = policy.activeEntitlements(receipt: receipt, kinds: kinds, now: now()).map {
            Entitlement(
                productID: $0.productID, transactionID: $0.transactionID,
                originalTransactionID: $0.originalTransactionID, purchaseDate: $0.purchaseDate,
                expiresDate: $0.expiresDate, quantity: $0.quantity)
        }
        return try JSONIO.response(EntitlementsResponse(environment: receipt.environment.rawValue, entitlements: entitlements))
    }

    func grant(_ request: Request, logger: Logger) async throws -> Response {
        do {
            let body = try await JSONIO.decodeBody(GrantRequest.self, from: request, limit: Self.receiptBodyLimit)
            guard Identifiers.isValidProductID(body.productID) else {
                throw APIError.badRequest("'\(body.productID.prefix(64))' is not a valid product ID.")
            }
            guard let product = catalog.snapshot.products[body.productID] else {
                throw APIError.notFound("There is no product '\(body.productID)'.")
            }
            let receipt = try await verified(body.receiptData, logger: logger)
            let transaction: StoreTransaction
            switch policy.evaluate(
                productID: product.info.productID, productKind: ProductKind(product.info.type), receipt: receipt,
                now: now())
            {
            case .success(let found): transaction = found
            case .failure(let refusal): throw APIError(refusal)
            }
            let expiresAt = now().addingTimeInterval(grantLifetime.timeInterval)
            let token = signer.sign(
                GrantClaims(
                    productID: product.info.productID, contentVersion: product.info.contentVersion,
                    transactionID: transaction.transactionID, expiresAt: Int64(expiresAt.timeIntervalSince1970)))
            let grant = Grant(
                productID: product.info.productID, contentVersion: product.info.contentVersion,
                totalLength: product.contentLength, expiresAt: expiresAt, token: token,
                files: product.files.map { file in
                    GrantFile(
                        path: file.path, length: file.length, sha256: file.sha256,
                        url: Self.contentURL(product: product.info.productID, version: product.info.contentVersion, path: file.path))
                })
            metrics.recordGrant(refusal: nil)
            logger.info(
                "grant issued",
                metadata: ["product": "\(grant.productID)", "version": "\(grant.contentVersion)", "environment": "\(receipt.environment.rawValue)"])
            return try JSONIO.response(grant)
        } catch let error as APIError {
            metrics.recordGrant(refusal: error.code.rawValue)
            throw error
        }
    }

    /// Verifies with the store and records every transaction of the receipt in the ledger.
    private func verified(_ receiptData: String, logger: Logger) async throws -> VerifiedReceipt {
        let receipt: VerifiedReceipt
        do {
            receipt = try await verifier.verify(receiptData: receiptData)
        } catch {
            logger.notice("receipt refused", metadata: ["code": "\(error.code)"])
            throw APIError(error)
        }
        let verifiedAt = now()
        try await ledger.record(
            receipt.transactions.map {
                LedgerTransaction(
                    transactionID: $0.transactionID, originalTransactionID: $0.originalTransactionID,
                    productID: $0.productID, environment: receipt.environment.rawValue, bundleID: receipt.bundleID,
                    purchaseDate: $0.purchaseDate, expiresDate: $0.expiresDate, cancellationDate: $0.cancellationDate,
                    quantity: $0.quantity, verifiedAt: verifiedAt)
            })
        return receipt
    }

    /// `/v1/content/<product>/<version>/<path>` with each path segment percent-encoded.
    static func contentURL(product: String, version: String, path: String) -> String {
        let encoded = path.split(separator: "/").map {
            String($0).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? String($0)
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

extension APIError {
    /// The envelope for a verification failure (with `Retry-After` when the store asked to retry).
    init(_ error: ReceiptVerificationError) {
        var headers: [String: String] = [:]
        if let seconds = error.retryAfterSeconds { headers["Retry-After"] = String(seconds) }
        self.init(APIErrorCode(rawValue: error.code) ?? .internalError, error.message, headers: headers)
    }

    /// The envelope for an entitlement refusal.
    init(_ refusal: EntitlementRefusal) {
        self.init(APIErrorCode(rawValue: refusal.code) ?? .notEntitled, refusal.message)
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    var timeInterval: TimeInterval {
        TimeInterval(components.seconds) + TimeInterval(components.attoseconds) / 1e18
    }
}
