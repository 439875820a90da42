import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `Date` header's value (RFC 9110 §5.6.7, IMF-fixdate, as Hummingbird sends it), formatted at most once a
/// second.
final class HTTPDateCache: Sendable {
    /// The process's cache (every connection shares one clock).
    static let shared = HTTPDateCache()

    private let cached = NIOLockedValueBox((second: -1, text: ""))

    /// Now, as `Sat, 28 Nov 2026 07:44:44 GMT`.
    var current: String { text(at: Int(time(nil))) }

    /// The value for `second` (a UNIX time), formatted once for every caller asking within that second.
    func text(at second: Int) -> String {
        cached.withLockedValue { cached in
            if cached.second != second { cached = (second, Self.format(secondsSince1970: second)) }
            return cached.text
        }
    }

    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// IMF-fixdate of a UNIX time.
    static func format(secondsSince1970: Int) -> String {
        var seconds = time_t(secondsSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(twoDigits(parts.tm_mday)) \(months[Int(parts.tm_mon)]) "
            + "\(parts.tm_year + 1900) \(twoDigits(parts.tm_hour)):\(twoDigits(parts.tm_min)):"
            + "\(twoDigits(parts.tm_sec)) GMT"
    }
}
