import KioskStore

/// What Kiosk tells the App Store about a purchase whose customer asked for a refund: the body of
/// `PUT /inApps/v2/transactions/consumption/{transactionId}`, built from the operator's settings and Kiosk's own
/// delivery records, nothing else.
///
/// - `customerConsented`: always `true`; an answer is sent only with `--consumption-info`, by which the operator
///   states that customers consented.
/// - `deliveryStatus`: `DELIVERED` when an installation reported installing the product (`POST /v1/deliveries`) for
///   the purchase; otherwise `UNDELIVERED_OTHER` (Kiosk cannot tell why there is no report).
/// - `consumptionPercentage`: 100000 (100 %) for a delivered consumable, whose content is used up once delivered;
///   absent otherwise. Kiosk cannot measure how much of a non-consumable or subscription's content was used, nor of
///   content it has no report of.
/// - `refundPreference`: `--refund-preference` (``ConsumptionRefundPreference/appStoreValue(consumptionPercentage:)``).
/// - `sampleContentProvided`: `--sample-content-provided`.
enum ConsumptionAnswer {
    /// The operator's settings.
    struct Policy: Sendable, Hashable {
        /// `--refund-preference`.
        var refundPreference: ConsumptionRefundPreference
        /// `--sample-content-provided`.
        var sampleContentProvided: Bool
    }

    /// The percentage of a fully consumed purchase, in thousandths of a percent.
    static let fullyConsumed = 100_000

    /// The answer for a purchase of the StoreKit type `productType` (`Consumable`, `Non-Consumable`, …), delivered
    /// or not.
    static func build(policy: Policy, productType: String?, delivered: Bool) -> AppStoreConsumptionRequest {
        let percentage = delivered && productType == "Consumable" ? fullyConsumed : nil
        return AppStoreConsumptionRequest(
            customerConsented: true, consumptionPercentage: percentage,
            deliveryStatus: delivered ? .delivered : .undeliveredOther,
            refundPreference: policy.refundPreference.appStoreValue(consumptionPercentage: percentage),
            sampleContentProvided: policy.sampleContentProvided)
    }
}
