import KioskStore

/// The refund a server's consumption answers ask the App Store for (`--refund-preference`).
public enum ConsumptionRefundPreference: String, Sendable, Hashable, CaseIterable {
    /// State no preference: the answer has no `refundPreference` (the default).
    case none
    /// Ask Apple not to refund (`DECLINE`).
    case decline
    /// Ask for a full refund (`GRANT_FULL`).
    case grantFull = "grant_full"
    /// Ask for a refund of what was not consumed (`GRANT_PRORATED`): stated only in an answer with a consumption
    /// percentage above 0, as Apple requires; other answers state none.
    case grantProrated = "grant_prorated"

    /// Apple's value in an answer whose consumption percentage is `percentage`; nil states none.
    func appStoreValue(consumptionPercentage percentage: Int?) -> AppStoreConsumptionRequest.RefundPreference? {
        switch self {
        case .none: nil
        case .decline: .decline
        case .grantFull: .grantFull
        case .grantProrated: (percentage ?? 0) > 0 ? .grantProrated : nil
        }
    }
}
