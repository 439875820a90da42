import Foundation
import KioskCore

/// Parses the `Retry-After` header field (RFC 9110 §10.2.3).
enum RetryAfter {
    /// The longest wait a server may ask for: one hour. A longer `Retry-After` is read as one hour.
    static let maximumSeconds: Double = 3600

    /// The number of seconds to wait: `delay-seconds` as is, an HTTP-date as the time left until it (0 when past),
    /// at most ``maximumSeconds``. `nil` for anything else.
    static func seconds(from value: String?, now: Date = Date()) -> Double? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return value.utf8.count > 12 ? nil : Double(value).map { min($0, maximumSeconds) }
        }
        guard let date = HTTPDate.parse(value, relativeTo: now) else { return nil }
        return min(max(0, date.timeIntervalSince(now)), maximumSeconds)
    }
}
