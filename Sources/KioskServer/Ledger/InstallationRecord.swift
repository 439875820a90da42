import Foundation

/// An installation using a purchase, as the ledger keeps it.
public struct InstallationRecord: Sendable, Hashable {
    /// The installation's ID, as its grant requests send it.
    public var installationID: String
    /// When it was first admitted.
    public var firstSeen: Date
    /// When it was last admitted (its first admission, for a row written before the ledger kept this).
    public var lastSeen: Date

    /// Creates a record.
    public init(installationID: String, firstSeen: Date, lastSeen: Date) {
        self.installationID = installationID
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }
}
