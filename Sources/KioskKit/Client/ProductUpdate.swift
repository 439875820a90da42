import KioskCore

/// An installed product whose version on the server is not the installed one (see
/// ``KioskClient/availableUpdates()``): enqueueing it again fetches the served version.
public struct ProductUpdate: Sendable, Hashable {
    /// The product as the server describes it now.
    public var product: Product
    /// The version installed on this device.
    public var installedVersion: String

    /// The version the server serves now.
    public var availableVersion: String { product.contentVersion }

    /// An update of an installed product.
    public init(product: Product, installedVersion: String) {
        self.product = product
        self.installedVersion = installedVersion
    }
}
