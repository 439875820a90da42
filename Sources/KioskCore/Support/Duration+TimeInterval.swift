import Foundation

extension Duration {
    /// The duration in seconds, as a `TimeInterval` (what `Date` arithmetic takes).
    public var timeInterval: TimeInterval { self / .seconds(1) }
}
