import Foundation

/// `POST /v1/installations`: which installations use the purchase that a proof holds for a product.
///
/// On the wire: `{"receipt-data" | "signed_transaction", "product_id"}`, the proof forms a grant request accepts.
public struct InstallationsRequest: Codable, Sendable, Hashable {
    /// The receipt or signed transaction holding the purchase.
    public var proof: PurchaseProof
    /// A product the purchase entitles; names the purchase.
    public var productID: String

    /// Creates a request.
    public init(proof: PurchaseProof, productID: String) {
        self.proof = proof
        self.productID = productID
    }

    enum CodingKeys: String, CodingKey {
        case productID = "product_id"
    }

    /// Decodes `{"receipt-data" | "signed_transaction", "product_id"}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        productID = try container.decode(String.self, forKey: .productID)
        proof = try PurchaseProof.decode(from: decoder)
    }

    /// Encodes the proof's field and `product_id`.
    public func encode(to encoder: any Encoder) throws {
        try proof.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(productID, forKey: .productID)
    }
}

/// `POST /v1/installations/remove`: stop an installation using the purchase, so that another may take its place.
///
/// On the wire: `{"receipt-data" | "signed_transaction", "product_id", "installation_id"}`.
public struct InstallationRemovalRequest: Codable, Sendable, Hashable {
    /// The receipt or signed transaction holding the purchase.
    public var proof: PurchaseProof
    /// A product the purchase entitles; names the purchase.
    public var productID: String
    /// The installation to remove, as ``Installation/installationID`` lists it.
    public var installationID: String

    /// Creates a request.
    public init(proof: PurchaseProof, productID: String, installationID: String) {
        self.proof = proof
        self.productID = productID
        self.installationID = installationID
    }

    enum CodingKeys: String, CodingKey {
        case productID = "product_id"
        case installationID = "installation_id"
    }

    /// Decodes `{"receipt-data" | "signed_transaction", "product_id", "installation_id"}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        productID = try container.decode(String.self, forKey: .productID)
        installationID = try container.decode(String.self, forKey: .installationID)
        proof = try PurchaseProof.decode(from: decoder)
    }

    /// Encodes the proof's field, `product_id` and `installation_id`.
    public func encode(to encoder: any Encoder) throws {
        try proof.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(productID, forKey: .productID)
        try container.encode(installationID, forKey: .installationID)
    }
}

/// One installation using a purchase.
public struct Installation: Codable, Sendable, Hashable {
    /// The installation's ID, as its grant requests send it (KioskKit: `KioskClient.installationID`).
    public var installationID: String
    /// When it first got a grant of the purchase.
    public var firstSeen: Date
    /// When it last got a grant of the purchase.
    public var lastSeen: Date

    /// Creates an entry.
    public init(installationID: String, firstSeen: Date, lastSeen: Date) {
        self.installationID = installationID
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }

    enum CodingKeys: String, CodingKey {
        case installationID = "installation_id"
        case firstSeen = "first_seen"
        case lastSeen = "last_seen"
    }
}

/// The answer of both installation calls: the installations using a purchase, the most allowed, and how many of them
/// may still be removed.
///
/// ```json
/// { "installations": [ { "installation_id": "…", "first_seen": "…", "last_seen": "…" } ],
///   "limit": 10, "removals_left": 2, "removals_reset_at": "2026-12-01T10:00:00Z" }
/// ```
public struct InstallationList: Codable, Sendable, Hashable {
    /// The installations using the purchase, first seen first.
    public var installations: [Installation]
    /// The most installations the purchase serves.
    public var limit: Int
    /// How many removals the purchase has left in the server's window.
    public var removalsLeft: Int
    /// When the oldest removal still counted leaves the window, giving one removal back; `nil` when none counts.
    public var removalsResetAt: Date?

    /// Creates an answer.
    public init(installations: [Installation], limit: Int, removalsLeft: Int, removalsResetAt: Date?) {
        self.installations = installations
        self.limit = limit
        self.removalsLeft = removalsLeft
        self.removalsResetAt = removalsResetAt
    }

    enum CodingKeys: String, CodingKey {
        case installations
        case limit
        case removalsLeft = "removals_left"
        case removalsResetAt = "removals_reset_at"
    }

    /// Decodes the answer; a missing `removals_reset_at` reads as `null`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        installations = try container.decode([Installation].self, forKey: .installations)
        limit = try container.decode(Int.self, forKey: .limit)
        removalsLeft = try container.decode(Int.self, forKey: .removalsLeft)
        removalsResetAt = try container.decodeIfPresent(Date.self, forKey: .removalsResetAt)
    }

    /// Encodes the answer, with `"removals_reset_at": null` when no removal counts.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(installations, forKey: .installations)
        try container.encode(limit, forKey: .limit)
        try container.encode(removalsLeft, forKey: .removalsLeft)
        try container.encode(removalsResetAt, forKey: .removalsResetAt)
    }

    /// Whether `installationID` is listed.
    public func contains(_ installationID: String) -> Bool {
        installations.contains { $0.installationID == installationID }
    }
}
