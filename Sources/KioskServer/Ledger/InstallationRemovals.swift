import Foundation

/// How many installations one purchase may remove in a rolling window, so that one proof of purchase cannot serve
/// any number of devices by removing and adding them in turn.
public struct RemovalLimit: Sendable, Hashable {
    /// The most removals in any ``window`` (0: none allowed).
    public var removals: Int
    /// The length of the rolling window.
    public var window: Duration

    /// Creates a limit.
    public init(removals: Int, window: Duration) {
        self.removals = removals
        self.window = window
    }

    /// The removals that count at `date`: those made after `date - window`.
    func windowStart(at date: Date) -> Date { date.addingTimeInterval(-window.timeInterval) }
}

/// How many removals a purchase has left at some moment.
public struct RemovalAllowance: Sendable, Hashable {
    /// How many more installations may be removed now.
    public var left: Int
    /// When the oldest removal still counted leaves the window (giving one back); `nil` when none counts.
    public var resetsAt: Date?

    /// Creates an allowance.
    public init(left: Int, resetsAt: Date?) {
        self.left = left
        self.resetsAt = resetsAt
    }

    /// The allowance under `limit` at `date`, given the dates of the purchase's removals inside the window.
    init(limit: RemovalLimit, removalsInWindow dates: [Date]) {
        left = max(0, limit.removals - dates.count)
        // To the next whole second, as the wire shows it: a client that waits until then is not refused.
        resetsAt = dates.min().map { oldest in
            let resets = oldest.addingTimeInterval(limit.window.timeInterval)
            return Date(timeIntervalSince1970: resets.timeIntervalSince1970.rounded(.up))
        }
    }
}

/// The ledger's answer when a purchase asks to remove one of its installations.
public enum InstallationRemoval: Sendable, Hashable {
    /// The installation was removed; the allowance after it.
    case removed(RemovalAllowance)
    /// The purchase has no such installation; nothing changed.
    case notFound
    /// The purchase has no removal left in the window; nothing changed. The allowance says when one comes back.
    case refused(RemovalAllowance)
}
