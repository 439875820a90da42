import Foundation

/// Identifies one download in a ``KioskClient``. Stable across launches (it is kept in the journal).
public struct DownloadID: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The underlying UUID.
    public let rawValue: UUID

    /// Creates an identifier (a new random one by default).
    public init(_ rawValue: UUID = UUID()) { self.rawValue = rawValue }

    /// The UUID string.
    public var description: String { rawValue.uuidString }
}

/// The order in which waiting downloads start: higher first, first-in first-out within one priority.
public struct DownloadPriority: Sendable, Hashable, Codable, Comparable {
    /// The numeric priority; higher starts first.
    public var rawValue: Int

    /// Creates a priority from a number.
    public init(_ rawValue: Int) { self.rawValue = rawValue }

    /// Background work (e.g. restore).
    public static let low = DownloadPriority(-10)
    /// The default.
    public static let normal = DownloadPriority(0)
    /// What the user is waiting for right now.
    public static let high = DownloadPriority(10)

    /// Compares by ``rawValue``.
    public static func < (lhs: DownloadPriority, rhs: DownloadPriority) -> Bool { lhs.rawValue < rhs.rawValue }
}
