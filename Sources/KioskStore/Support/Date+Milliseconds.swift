import Foundation

extension Date {
    /// Whole milliseconds since 1970, as the store and the ledger count time.
    package var millisecondsSince1970: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }

    /// A date from milliseconds since 1970.
    package init(milliseconds: Int64) { self.init(timeIntervalSince1970: TimeInterval(milliseconds) / 1000) }
}
