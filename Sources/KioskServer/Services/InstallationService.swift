import Foundation
import KioskCore
import Logging

/// Which installations use a purchase, with no HTTP: admits an installation under the cap when it asks for a
/// grant, lists a purchase's installations, and removes one under the removal limit, so that a user who reached the
/// cap can move the purchase to a new device without contacting support, while one proof of purchase cannot serve
/// any number of devices by removing and adding them in turn.
///
/// A purchase is named by a proof and a product, checked as a grant checks them (``PurchaseCheck``); its
/// installations are those of the transaction's original transaction. Refusals render themselves:
/// ``GrantRefusal`` for the proof and the product and the cap, ``InstallationRefusal`` for a removal.
///
/// Installation IDs are never logged: the requests carry the proof that would pair them with a purchase.
struct InstallationService: Sendable {
    let purchases: PurchaseCheck
    let ledger: any Ledger
    let metrics: ServerMetrics
    /// The most installations one purchase serves grants to.
    let maxInstallations: Int
    /// How many installations one purchase may remove, and in what window.
    let removalLimit: RemovalLimit
    let now: @Sendable () -> Date

    /// Registers the installation as a user of the purchase `originalTransactionID`, or refuses it beyond the cap
    /// with ``GrantRefusal/installationLimit(installations:removals:)``, which says how to remove one.
    func admit(_ installationID: String, originalTransactionID: String, logger: Logger) async throws {
        let date = now()
        let admission = try await ledger.admitInstallation(
            installationID, originalTransactionID: originalTransactionID, limit: maxInstallations, at: date)
        guard case .refused(let count) = admission else { return }
        metrics.recordInstallationRefusal()
        logger.notice("installation limit reached", metadata: ["installations": "\(count)"])
        let removals = try await ledger.removalAllowance(
            originalTransactionID: originalTransactionID, limit: removalLimit, at: date)
        throw GrantRefusal.installationLimit(installations: count, removals: removals)
    }

    /// `POST /v1/installations`: the installations using the purchase of `request`.
    func installations(_ request: InstallationsRequest, logger: Logger) async throws -> InstallationList {
        let purchase = try await purchases.purchase(of: request.productID, proof: request.proof, logger: logger)
        return try await list(originalTransactionID: purchase.transaction.originalTransactionID, at: now())
    }

    /// `POST /v1/installations/remove`: removes one installation from the purchase of `request`, and lists those
    /// left.
    func remove(_ request: InstallationRemovalRequest, logger: Logger) async throws -> InstallationList {
        guard GrantService.isValidInstallationID(request.installationID) else {
            throw GrantRefusal.invalidInstallationID
        }
        let purchase = try await purchases.purchase(of: request.productID, proof: request.proof, logger: logger)
        let original = purchase.transaction.originalTransactionID
        let date = now()
        switch try await ledger.removeInstallation(
            request.installationID, originalTransactionID: original, limit: removalLimit, at: date)
        {
        case .removed(let allowance):
            logger.info("installation removed", metadata: ["removals_left": "\(allowance.left)"])
        case .notFound:
            throw InstallationRefusal.unknownInstallation
        case .refused(let allowance):
            logger.notice("installation removal limit reached", metadata: ["removals": "\(removalLimit.removals)"])
            let seconds = allowance.resetsAt.map { Int(max(1, $0.timeIntervalSince(date).rounded(.up))) }
            throw InstallationRefusal.removalLimit(
                limit: removalLimit, nextRemovalAt: allowance.resetsAt, secondsLeft: seconds)
        }
        return try await list(originalTransactionID: original, at: date)
    }

    /// The installations of the purchase `originalTransactionID`, the cap, and the removals left at `date`.
    private func list(originalTransactionID: String, at date: Date) async throws -> InstallationList {
        let records = try await ledger.installations(originalTransactionID: originalTransactionID)
        let removals = try await ledger.removalAllowance(
            originalTransactionID: originalTransactionID, limit: removalLimit, at: date)
        return InstallationList(
            installations: records.map {
                Installation(installationID: $0.installationID, firstSeen: $0.firstSeen, lastSeen: $0.lastSeen)
            },
            limit: maxInstallations, removalsLeft: removals.left, removalsResetAt: removals.resetsAt)
    }
}
