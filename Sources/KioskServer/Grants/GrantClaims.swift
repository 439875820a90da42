/// What a grant token says: which product version it opens, for which transaction, until when.
public struct GrantClaims: Codable, Sendable, Hashable {
    /// The product the token opens.
    public var productID: String
    /// The content version the token opens.
    public var contentVersion: String
    /// The store transaction that paid for it (for audit and revocation).
    public var transactionID: String
    /// Expiry, in whole seconds since 1970.
    public var expiresAt: Int64
    /// The first transaction of the paying purchase: revoking it revokes the token too. Absent in tokens issued
    /// before it was added.
    public var originalTransactionID: String?

    /// Creates claims.
    public init(
        productID: String, contentVersion: String, transactionID: String, expiresAt: Int64,
        originalTransactionID: String? = nil
    ) {
        self.productID = productID
        self.contentVersion = contentVersion
        self.transactionID = transactionID
        self.expiresAt = expiresAt
        self.originalTransactionID = originalTransactionID
    }

    /// Whether these claims open `productID` at `version`: the same product and version exactly.
    public func opens(productID: String, version: String) -> Bool {
        self.productID == productID && contentVersion == version
    }

    enum CodingKeys: String, CodingKey {
        case productID = "p"
        case contentVersion = "v"
        case transactionID = "t"
        case expiresAt = "exp"
        case originalTransactionID = "o"
    }
}
