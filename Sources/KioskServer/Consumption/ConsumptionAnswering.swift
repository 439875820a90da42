import Foundation
import KioskStore
import Logging

/// Answers the App Store's `CONSUMPTION_REQUEST` notifications (a customer asked for a refund) with
/// `PUT /inApps/v2/transactions/consumption/{transactionId}`, from Kiosk's delivery records
/// (``ConsumptionAnswer``), and records in the ledger what was sent, or why it was not.
///
/// Only with `--consumption-info` (the operator states that customers consented, as Apple requires) and the App
/// Store Server API; otherwise a notice says that a request arrived unanswered and which setting answers it.
struct ConsumptionAnswering: Sendable {
    /// Whether and how requests are answered.
    enum Mode: Sendable {
        /// `--consumption-info` is off.
        case off
        /// `--consumption-info` is on, but there is no App Store Server API key.
        case noAPI
        /// Answered through `api` as `policy` says.
        case on(api: AppStoreServerAPI, policy: ConsumptionAnswer.Policy)
    }

    /// The call's name in `kiosk_app_store_api_calls_total`.
    static let call = "consumption"

    let mode: Mode
    let ledger: any Ledger
    let outcome: AppStoreAPICallOutcome
    let now: @Sendable () -> Date

    /// The answering a server with `configuration` does, through `api` when it has one.
    init(
        configuration: ServerConfiguration, api: AppStoreServerAPI?, ledger: any Ledger,
        outcome: AppStoreAPICallOutcome, now: @escaping @Sendable () -> Date
    ) {
        let policy = ConsumptionAnswer.Policy(
            refundPreference: configuration.refundPreference,
            sampleContentProvided: configuration.sampleContentProvided)
        self.mode =
            switch (configuration.consumptionInfo, api) {
            case (false, _): .off
            case (true, nil): .noAPI
            case (true, let api?): .on(api: api, policy: policy)
            }
        self.ledger = ledger
        self.outcome = outcome
        self.now = now
    }

    /// Answers the consumption request `notification` about `transaction`, applied just now (never a duplicate).
    /// An answer that cannot be sent is logged and recorded, never thrown: the notification stands.
    /// - Throws: the ledger's errors; a cancellation.
    func answer(_ notification: NotificationPayload, about transaction: JWSTransaction, logger: Logger) async throws {
        let metadata: Logger.Metadata = [
            "product": "\(transaction.productId)", "environment": "\(transaction.environment)",
        ]
        let api: AppStoreServerAPI
        let policy: ConsumptionAnswer.Policy
        switch mode {
        case .off:
            logger.notice(
                "consumption request not answered: --consumption-info (KIOSK_CONSUMPTION_INFO) answers it",
                metadata: metadata)
            return
        case .noAPI:
            logger.notice(
                "consumption request not answered: the App Store Server API is off (no key)", metadata: metadata)
            return
        case .on(let configuredAPI, let configuredPolicy): (api, policy) = (configuredAPI, configuredPolicy)
        }
        let deliveries = try await ledger.deliveries(
            originalTransactionID: transaction.originalTransactionId, productID: transaction.productId)
        let answer = ConsumptionAnswer.build(
            policy: policy, productType: transaction.type, delivered: !deliveries.isEmpty)
        var record = ConsumptionAnswerRecord(
            notificationUUID: notification.notificationUUID, transactionID: transaction.transactionId, body: nil,
            failure: nil, answeredAt: now())
        do {
            // The verifier accepts only the environments the server is configured for, all of them the App Store's.
            let environment = StoreEnvironment(appleName: transaction.environment) ?? .production
            try await api.sendConsumption(answer, for: transaction.transactionId, environment: environment)
            outcome.succeeded(Self.call)
            record.body = String(decoding: try JSONEncoder().encode(answer), as: UTF8.self)
            logger.info(
                "consumption request answered",
                metadata: metadata.merging(["delivery_status": "\(answer.deliveryStatus.rawValue)"]) { $1 })
        } catch {
            record.failure = try outcome.abandoned(Self.call, error, logger: logger)
        }
        record.answeredAt = now()
        try await ledger.recordConsumptionAnswer(record)
    }
}
