import Foundation

/// The body of `POST /v1/deliveries`: an installation reports that it installed a product version, fully downloaded
/// and verified, with the grant token that opened it in `Authorization: Bearer`. The server keeps it so that it can
/// tell the App Store the content was delivered when the customer asks for a refund (a consumption answer).
///
/// On the wire: `{"product_id", "content_version", "installation_id"}`.
public struct DeliveryReportRequest: Codable, Sendable, Hashable {
    /// The product installed: the one the token opens.
    public var productID: String
    /// The content version installed: the one the token opens.
    public var contentVersion: String
    /// The installation that installed it (the ID its grant requests send).
    public var installationID: String

    /// Creates a report.
    public init(productID: String, contentVersion: String, installationID: String) {
        self.productID = productID
        self.contentVersion = contentVersion
        self.installationID = installationID
    }

    enum CodingKeys: String, CodingKey {
        case productID = "product_id"
        case contentVersion = "content_version"
        case installationID = "installation_id"
    }
}

/// The answer to `POST /v1/deliveries`: `{"status": "recorded" | "already_recorded"}`.
public struct DeliveryReportResponse: Codable, Sendable, Hashable {
    /// What the server did with a report.
    public enum Status: String, Codable, Sendable, Hashable {
        /// Kept: the first report of this purchase, product, version and installation.
        case recorded
        /// The same report was kept before; nothing changed.
        case alreadyRecorded = "already_recorded"
    }

    /// What the server did.
    public var status: Status

    /// Creates an answer.
    public init(status: Status) { self.status = status }
}
