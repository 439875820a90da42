import Foundation
import KioskCore

/// Why ``InstallationService`` removes no installation (besides the refusals of ``PurchaseCheck``, shared with
/// grants).
public enum InstallationRefusal: Error, Sendable, Hashable {
    /// The purchase has no such installation (`not_found`).
    case unknownInstallation
    /// The purchase removed as many installations as `limit` allows in its window; the next removal is allowed at
    /// `nextRemovalAt`, `secondsLeft` from now (`removal_limit`, with `Retry-After`).
    case removalLimit(limit: RemovalLimit, nextRemovalAt: Date?, secondsLeft: Int?)
}

extension InstallationRefusal: APIResponseError {
    /// `not_found` or `removal_limit`.
    public var errorCode: APIErrorCode {
        switch self {
        case .unknownInstallation: .notFound
        case .removalLimit: .removalLimit
        }
    }

    /// What is wrong, and for the removal limit when the next removal is allowed.
    public var message: String {
        switch self {
        case .unknownInstallation:
            "This purchase has no such installation; POST /v1/installations lists the ones it has."
        case .removalLimit(let limit, let next?, _):
            "This purchase already removed \(limit.removals) installations in the last "
                + "\(Self.days(limit.window)); the next removal is allowed at \(RFC3339.string(from: next)). "
                + "Contact support if you need one sooner."
        case .removalLimit:
            "This server allows no removal of installations; contact support."
        }
    }

    /// `Retry-After` in seconds until the next removal is allowed, for the removal limit.
    public var headers: [String: String] {
        guard case .removalLimit(_, _, let seconds?) = self else { return [:] }
        return ["Retry-After": String(seconds)]
    }

    /// A window in days (or hours, or seconds, when not whole), for a person.
    private static func days(_ window: Duration) -> String {
        let seconds = Int(window.components.seconds)
        func count(_ value: Int, _ unit: String) -> String { value == 1 ? "1 \(unit)" : "\(value) \(unit)s" }
        if seconds >= 86_400, seconds % 86_400 == 0 { return count(seconds / 86_400, "day") }
        if seconds >= 3_600, seconds % 3_600 == 0 { return count(seconds / 3_600, "hour") }
        return count(seconds, "second")
    }
}
