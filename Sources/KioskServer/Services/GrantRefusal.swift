import KioskCore
import KioskStore

/// Why ``GrantService`` issues no grant for a request (besides a proof the store or the signature check refused,
/// which throws the store's own refusal).
public enum GrantRefusal: Error, Sendable, Hashable {
    /// The product ID is not one (`bad_request`).
    case invalidProductID(String)
    /// The request names no installation, so the installation cap could not be applied (`bad_request`).
    case installationIDMissing
    /// The installation ID is not 1 to 128 safe characters (`bad_request`).
    case invalidInstallationID
    /// The catalog has no such product (`not_found`).
    case unknownProduct(String)
    /// The proof does not entitle to the product (`not_entitled`, or `receipt_invalid` for another app's proof).
    case notEntitled(EntitlementRefusal)
    /// The purchase already serves `installations` installations, the most allowed (`installation_limit`); it may
    /// remove as many more as `removals` says.
    case installationLimit(installations: Int, removals: RemovalAllowance)
}

extension GrantRefusal: APIResponseError {
    /// The envelope code; an entitlement refusal keeps its own.
    public var errorCode: APIErrorCode {
        switch self {
        case .invalidProductID, .installationIDMissing, .invalidInstallationID: .badRequest
        case .unknownProduct: .notFound
        case .notEntitled(let refusal): refusal.errorCode
        case .installationLimit: .installationLimit
        }
    }

    /// What is wrong, and for the installation cap what the user can do.
    public var message: String {
        switch self {
        case .invalidProductID(let id): "'\(id.prefix(64))' is not a valid product ID."
        case .installationIDMissing:
            "A grant request needs an installation_id: a stable ID of the app installation asking (KioskKit sends "
                + "one)."
        case .invalidInstallationID: "An installation ID is 1 to 128 letters, digits, '.', '_' or '-'."
        case .unknownProduct(let id): "There is no product '\(id)'."
        case .notEntitled(let refusal): refusal.message
        case .installationLimit(let count, let removals):
            "This purchase is already used on \(count) installations, the most allowed. To use it here, remove one "
                + "of them: POST /v1/installations lists them and POST /v1/installations/remove removes one "
                + "(KioskKit: KioskClient.installations(productID:proof:) and "
                + "KioskClient.removeInstallation(_:productID:proof:)). "
                + Self.removalsLeft(removals)
        }
    }

    /// How many removals are left, and when one comes back if none is.
    private static func removalsLeft(_ removals: RemovalAllowance) -> String {
        switch (removals.left, removals.resetsAt) {
        case (0, let resetsAt?): "No removal is left until \(RFC3339.string(from: resetsAt)); or contact support."
        case (0, nil): "This server allows no removal; contact support."
        case (1, _): "1 removal is left."
        case (let left, _): "\(left) removals are left."
        }
    }
}
