import Foundation
import KioskStore
import Logging

/// `--receipt-validation api`: an app receipt is read and verified here (``AppReceiptVerifier``: the PKCS#7
/// signature, the chain to Apple's root at the receipt's creation date, the bundle ID) instead of being sent to
/// Apple's deprecated `verifyReceipt`. Its in-app purchases then go through the ledger like any proof's, and the App
/// Store Server API (history at restore, lookups at grant time) keeps them fresh. A transaction ID alone is
/// guessable: an unsigned or re-signed receipt is refused.
struct LocalReceiptVerifier: Sendable {
    let verifier: AppReceiptVerifier
    /// The environments the server accepts.
    let environments: Set<StoreEnvironment>

    /// The receipt's purchases, verified.
    /// - Throws: ``AppReceiptRefusal``; ``ReceiptVerificationError/environmentNotAccepted(_:)`` for a receipt of an
    ///   environment the server does not accept.
    func verify(receiptData: String, logger: Logger) async throws -> VerifiedReceipt {
        let verified: VerifiedAppReceipt
        do {
            verified = try await verifier.verify(base64: receiptData)
        } catch {
            logger.notice("app receipt refused", metadata: ["reason": "\(error.reason)"])
            throw error
        }
        let environment = Self.environment(of: verified)
        guard environments.contains(environment) else {
            throw ReceiptVerificationError.environmentNotAccepted(environment)
        }
        return VerifiedReceipt(
            environment: environment, bundleID: verified.contents.bundleID,
            transactions: verified.contents.storeTransactions, status: 0)
    }

    /// The environment a receipt belongs to: `Production` by its receipt type; any other type (`ProductionSandbox`,
    /// `Xcode`), and a receipt accepted through the local testing root, is the sandbox's.
    static func environment(of receipt: VerifiedAppReceipt) -> StoreEnvironment {
        receipt.anchor == .trustedRoot && receipt.contents.receiptType == "Production" ? .production : .sandbox
    }
}
