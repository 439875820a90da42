// Linux only (the target is a dependency on Linux alone): the names of StoreKit 2 that the README's snippets use,
// with StoreKit's signatures, so that the snippets compile where StoreKit does not exist.

/// StoreKit's transaction, reduced to what the README uses.
public struct Transaction: Sendable {
    /// The purchased product.
    public let productID: String

    /// Creates a transaction for a product.
    public init(productID: String) { self.productID = productID }

    /// Tells the store that the purchase was delivered.
    public func finish() async {}
}

/// StoreKit's verification result, reduced to what the README uses.
public struct VerificationResult<SignedType: Sendable>: Sendable {
    /// The signed transaction, a compact JWS.
    public let jwsRepresentation: String

    /// Creates a result from its JWS.
    public init(jwsRepresentation: String) { self.jwsRepresentation = jwsRepresentation }
}
