import Foundation
import KioskCore

/// Why a receipt could not be verified, with the store's status code where one applies.
///
/// Each case has a sentence a person understands (`message`), which never contains the receipt. The server maps
/// each case to its API error code and HTTP status.
public enum ReceiptVerificationError: Error, Sendable, Hashable {
    /// The receipt is longer than the server's `ReceiptVerifier.maximumReceiptLength` (3 MiB, as Apple).
    case payloadTooLarge
    /// The receipt is empty or not base64 (`status` is `nil`), or the store could not read it (`21002`).
    case receiptMalformed(status: Int?)
    /// The store did not authenticate the receipt (`21003`, `21010`, an environment ping-pong, an unknown status).
    case receiptInvalid(status: Int)
    /// The store is down or asked us to retry, and the retries ran out; the client may retry after `retryAfter`
    /// (whole seconds, at least one). `status` is the store's last status, `nil` after HTTP or network failures.
    case storeUnavailable(retryAfter: Duration, status: Int?)
    /// The store refused our request itself: a wrong shared secret (`21004`), a request it cannot read
    /// (`21000`, `21001`) or an HTTP 4xx (`httpStatus`). An operator must act.
    case storeMisconfigured(status: Int?, httpStatus: Int? = nil)
    /// The store authenticated the receipt, but in an App Store environment this server does not accept
    /// (`--transaction-environments`): refused before any grant.
    case environmentNotAccepted(StoreEnvironment)

    /// The store's status code, when the store gave one.
    public var storeStatus: Int? {
        switch self {
        case .payloadTooLarge: nil
        case .receiptMalformed(let status): status
        case .receiptInvalid(let status): status
        case .storeUnavailable(_, let status): status
        case .storeMisconfigured(let status, _): status
        case .environmentNotAccepted: nil
        }
    }

    /// The value of the `Retry-After` header, in whole seconds, for ``storeUnavailable(retryAfter:status:)``.
    public var retryAfterSeconds: Int? {
        guard case .storeUnavailable(let retryAfter, _) = self else { return nil }
        return retryAfter.retryAfterSeconds
    }

    /// A sentence for people, e.g. "The store rejected this receipt (status 21003)."
    public var message: String {
        switch self {
        case .payloadTooLarge:
            return "The receipt is larger than 3 MiB, the most the store accepts."
        case .receiptMalformed(nil):
            return "The receipt data is empty or not valid base64."
        case .receiptMalformed(let status?):
            return "The store could not read this receipt (status \(status))."
        case .receiptInvalid(let status):
            return "The store rejected this receipt (status \(status))."
        case .storeUnavailable(let retryAfter, let status):
            let seconds = retryAfter.retryAfterSeconds
            let wait = "try again in \(seconds) second\(seconds == 1 ? "" : "s")"
            if let status { return "The store is temporarily unavailable (status \(status)); \(wait)." }
            return "The store could not be reached; \(wait)."
        case .storeMisconfigured(21004?, _):
            return "The store rejected the server's shared secret (status 21004); an operator must check it."
        case .storeMisconfigured(let status?, _):
            return "The store refused the server's request (status \(status)); an operator must check the setup."
        case .storeMisconfigured(nil, let httpStatus?):
            return "The store answered HTTP \(httpStatus); an operator must check the store URLs."
        case .storeMisconfigured(nil, nil):
            return "The store refused the server's request; an operator must check the setup."
        case .environmentNotAccepted(let environment):
            return "This receipt is from the App Store's \(environment.rawValue) environment, which this server "
                + "does not accept."
        }
    }
}
