import KioskCore

/// Why the sandbox store refuses a purchase, a refund or a notification request.
public enum SandboxRefusal: Error, Sendable, Hashable {
    /// The product ID is not one (`bad_request`).
    case invalidProductID(String)
    /// The catalog has no such product (`not_found`).
    case productNotSold(String)
    /// The user name is not 1 to 64 safe characters (`bad_request`).
    case invalidUser
    /// The quantity is not 1 to 100 (`bad_request`).
    case invalidQuantity
    /// More than one of a product that is not consumable (`bad_request`).
    case quantityOfNonConsumable
    /// The store has no such transaction (`not_found`).
    case unknownTransaction(String)
    /// The store was started without a signing chain, so it cannot sign notifications (`not_found`).
    case noSigningChain
    /// A refund reversal for a transaction that was not refunded (`bad_request`).
    case notRefunded(transactionID: String)
    /// `grace_days` is not 1 to 60 (`bad_request`).
    case invalidGraceDays
    /// A subscription notification for a transaction that is not an auto-renewable subscription (`bad_request`).
    case notAutoRenewable(transactionID: String)
    /// A subscription notification for a subscription whose periods were all refunded (`bad_request`).
    case subscriptionRefunded(transactionID: String)
}

extension SandboxRefusal: APIResponseError {
    /// `not_found` for what does not exist, `bad_request` otherwise.
    public var errorCode: APIErrorCode {
        switch self {
        case .productNotSold, .unknownTransaction, .noSigningChain: .notFound
        case .invalidProductID, .invalidUser, .invalidQuantity, .quantityOfNonConsumable, .notRefunded,
            .invalidGraceDays, .notAutoRenewable, .subscriptionRefunded:
            .badRequest
        }
    }

    /// What is wrong, naming the product or transaction.
    public var message: String {
        switch self {
        case .invalidProductID(let id): "'\(id.prefix(64))' is not a valid product ID."
        case .productNotSold(let id): "The sandbox store does not sell '\(id)'."
        case .invalidUser: "A sandbox user name is 1 to 64 letters, digits, '.', '_', '@' or '-'."
        case .invalidQuantity: "The quantity must be 1 to 100."
        case .quantityOfNonConsumable: "Only consumable products can be bought more than one at a time."
        case .unknownTransaction(let id): "The sandbox store has no transaction '\(id.prefix(64))'."
        case .noSigningChain: "The sandbox store has no signing chain."
        case .notRefunded(let id): "Transaction \(id) was not refunded, so there is nothing to reverse."
        case .invalidGraceDays: "grace_days must be 1 to 60."
        case .notAutoRenewable(let id): "Transaction \(id) is not an auto-renewable subscription."
        case .subscriptionRefunded(let id): "The subscription of transaction \(id) was refunded."
        }
    }
}
