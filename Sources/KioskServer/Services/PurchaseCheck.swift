import Foundation
import KioskCore
import KioskStore
import Logging

/// The one way a request's proof of purchase is checked against a product: the product ID is valid and in the
/// catalog, the proof verifies (its transactions are recorded in the ledger), and the entitlement policy finds the
/// transaction that pays for the product now. ``GrantService`` and ``InstallationService`` both ask it, so that a
/// bad proof or product is refused alike everywhere.
///
/// Refuses with ``GrantRefusal`` (`bad_request`, `not_found`, `not_entitled`) or the store's own refusal for a proof
/// that does not verify.
struct PurchaseCheck: Sendable {
    let catalog: ContentCatalog
    let proofs: ProofVerifier
    let policy: EntitlementPolicy
    /// Looks the entitling transaction up with the App Store Server API (`--transaction-refresh`); nil without the
    /// API.
    var refresh: TransactionRefresh? = nil
    let now: @Sendable () -> Date

    /// The product `productID`, and the transaction of `proof` that entitles to it now. With ``refresh``, that
    /// transaction's state is confirmed with Apple first (unless the ledger did recently): a revocation found
    /// there refuses.
    func purchase(of productID: String, proof: PurchaseProof, logger: Logger) async throws -> CheckedPurchase {
        guard Identifiers.isValidProductID(productID) else { throw GrantRefusal.invalidProductID(productID) }
        let snapshot = catalog.snapshot
        guard let product = snapshot.products[productID] else { throw GrantRefusal.unknownProduct(productID) }
        var receipt = try await proofs.verify(proof, logger: logger)
        var decision = policy.evaluate(
            productID: product.info.productID, products: snapshot.entitlements, receipt: receipt, now: now())
        if case .success(let transaction) = decision, let refresh,
            try await refresh.refresh(transaction, environment: receipt.environment, logger: logger)
        {
            receipt = try await proofs.standing(receipt)
            decision = policy.evaluate(
                productID: product.info.productID, products: snapshot.entitlements, receipt: receipt, now: now())
        }
        switch decision {
        case .success(let transaction):
            return CheckedPurchase(snapshot: snapshot, product: product, receipt: receipt, transaction: transaction)
        case .failure(let refusal): throw GrantRefusal.notEntitled(refusal)
        }
    }
}

/// What ``PurchaseCheck`` found: the product in the catalog snapshot it was found in, the verified proof, and the
/// transaction that pays for the product (its original transaction names the purchase).
struct CheckedPurchase: Sendable {
    /// The catalog the product was found in.
    let snapshot: CatalogSnapshot
    /// The product.
    let product: CatalogProduct
    /// The verified proof.
    let receipt: VerifiedReceipt
    /// The transaction that entitles to the product now.
    let transaction: StoreTransaction
}
