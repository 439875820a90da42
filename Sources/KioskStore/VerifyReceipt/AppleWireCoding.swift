import Foundation

/// A coding key for Apple's `verifyReceipt` JSON.
///
/// Apple's keys mix `snake_case`, `kebab-case` and derived spellings of one field (`purchase_date`,
/// `purchase_date_ms`, `purchase_date_pst`), so the wire types read and write them by name.
struct AppleKey: CodingKey, Hashable, Sendable, ExpressibleByStringLiteral {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ stringValue: String) { self.stringValue = stringValue }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
    init(stringLiteral value: String) { self.stringValue = value }
}

// MARK: - Lenient decoding

extension KeyedDecodingContainer where Key == AppleKey {
    /// The value at `key` as text, whether Apple sent a JSON string, number or Boolean.
    ///
    /// Returns `nil` when the key is absent, `null` or an empty string; throws when it holds an object or array.
    func lenientString(_ key: AppleKey) throws -> String? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let text = try? decode(String.self, forKey: key) { return text.isEmpty ? nil : text }
        if let integer = try? decode(Int64.self, forKey: key) { return String(integer) }
        if let integer = try? decode(UInt64.self, forKey: key) { return String(integer) }
        if let number = try? decode(Double.self, forKey: key), number.isFinite {
            if number == number.rounded(), abs(number) < 9.0e18 { return String(Int64(number)) }
            return String(number)
        }
        if let flag = try? decode(Bool.self, forKey: key) { return flag ? "true" : "false" }
        throw DecodingError.typeMismatch(
            String.self,
            .init(codingPath: codingPath + [key], debugDescription: "Expected a string or a number.")
        )
    }

    /// Like ``lenientString(_:)`` but the value must be present.
    func requiredString(_ key: AppleKey) throws -> String {
        guard let text = try lenientString(key) else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "Missing or empty \(key.stringValue).")
            )
        }
        return text
    }

    /// An integer Apple may send as a number or as a string (`"quantity": "1"`).
    func lenientInt(_ key: AppleKey) throws -> Int? {
        guard let text = try lenientString(key) else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let value = Int(trimmed) { return value }
        if let value = Double(trimmed), value == value.rounded(), abs(value) < 9.0e18 { return Int(value) }
        throw corrupted(key, "Expected an integer, found \"\(text)\".")
    }

    /// A Boolean Apple may send as `true`, `"true"`, `"1"` or `1` (and their negatives).
    func lenientBool(_ key: AppleKey) throws -> Bool? {
        guard let text = try lenientString(key) else { return nil }
        switch text.trimmingCharacters(in: .whitespaces).lowercased() {
        case "true", "1", "yes": return true
        case "false", "0", "no": return false
        default: throw corrupted(key, "Expected a Boolean, found \"\(text)\".")
        }
    }

    /// A date Apple spells several ways: `<base>_ms` (milliseconds since 1970), `<base>` (a human date such as
    /// `2023-11-14 22:13:20 Etc/GMT`, or milliseconds in iOS 6 style receipts) or `<base>_formatted`.
    ///
    /// The first present spelling wins; a present but unreadable value throws.
    func lenientDate(_ base: String) throws -> Date? {
        for spelling in [base + "_ms", base, base + "_formatted"] {
            let key = AppleKey(spelling)
            guard let text = try lenientString(key) else { continue }
            guard let date = AppleDate.parse(text) else {
                throw corrupted(key, "Expected milliseconds or a date like 2023-11-14 22:13:20 Etc/GMT.")
            }
            return date
        }
        return nil
    }

    private func corrupted(_ key: AppleKey, _ description: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: codingPath + [key], debugDescription: description))
    }
}

// MARK: - Apple-style encoding

extension KeyedEncodingContainer where Key == AppleKey {
    /// Writes `date` the way Apple does: `<base>_ms` as a string of milliseconds, `<base>` in `Etc/GMT` and
    /// `<base>_pst` in `America/Los_Angeles`.
    mutating func encodeAppleDate(_ date: Date?, _ base: String) throws {
        guard let date else { return }
        try encode(AppleDate.milliseconds(date), forKey: AppleKey(base + "_ms"))
        try encode(AppleDate.string(date, timeZoneID: AppleDate.gmt), forKey: AppleKey(base))
        if let pacific = AppleDate.string(date, timeZoneID: AppleDate.pacific) {
            try encode(pacific, forKey: AppleKey(base + "_pst"))
        }
    }

    /// Writes an optional value as Apple's string form, leaving the key out when it is `nil`.
    mutating func encodeAppleString(_ value: (some CustomStringConvertible)?, _ key: AppleKey) throws {
        guard let value else { return }
        try encode(value.description, forKey: key)
    }
}

// MARK: - Dates

/// Apple's date spellings in `verifyReceipt` answers.
enum AppleDate {
    /// The zone Apple names in its UTC dates.
    static let gmt = "Etc/GMT"
    /// The zone of Apple's `_pst` dates.
    static let pacific = "America/Los_Angeles"

    /// The largest distance from 1970, in milliseconds, of a date that ``parse(_:)`` accepts: the ledger and
    /// ``milliseconds(_:)`` store dates as `Int64` milliseconds, which would overflow (and trap) beyond it.
    static let maximumMilliseconds = 9.0e18

    /// Reads milliseconds since 1970 (`"1700000000000"`, negative before 1970, as ``milliseconds(_:)`` writes
    /// them), Apple's human form (`"2023-11-14 22:13:20 Etc/GMT"`) or RFC 3339 (`"2023-11-14T22:13:20Z"`).
    ///
    /// Returns `nil` for anything else and for dates more than ``maximumMilliseconds`` away from 1970.
    static func parse(_ text: String) -> Date? {
        let text = text.trimmingCharacters(in: .whitespaces)
        let magnitude = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        let date: Date?
        if let milliseconds = Double(text), !magnitude.isEmpty, magnitude.allSatisfy({ $0.isNumber || $0 == "." }) {
            date = Date(timeIntervalSince1970: milliseconds / 1000)
        } else {
            date = parseHuman(text) ?? (try? Date(text, strategy: .iso8601))
        }
        guard let date, abs(date.timeIntervalSince1970 * 1000) < maximumMilliseconds else { return nil }
        // Whole milliseconds, as the ledger keeps dates and as ``milliseconds(_:)`` writes them: a fraction
        // (`"1700000000000.1"`) would otherwise order transactions differently once written and read again.
        return Date(milliseconds: date.millisecondsSince1970)
    }

    /// `date` as a string of whole milliseconds since 1970.
    static func milliseconds(_ date: Date) -> String {
        String(date.millisecondsSince1970)
    }

    /// `date` as `yyyy-MM-dd HH:mm:ss <zone>`, or `nil` when the zone is unknown on this system.
    static func string(_ date: Date, timeZoneID: String) -> String? {
        guard let zone = timeZone(timeZoneID) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func pad(_ value: Int?, _ width: Int) -> String {
            let digits = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.year, 4))-\(pad(parts.month, 2))-\(pad(parts.day, 2)) "
            + "\(pad(parts.hour, 2)):\(pad(parts.minute, 2)):\(pad(parts.second, 2)) \(timeZoneID)"
    }

    private static func parseHuman(_ text: String) -> Date? {
        let fields = text.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count == 2 || fields.count == 3 else { return nil }
        let day = fields[0].split(separator: "-").compactMap { Int($0) }
        let time = fields[1].split(separator: ":").compactMap { Int($0) }
        guard day.count == 3, time.count == 3,
            let zone = fields.count == 3 ? timeZone(String(fields[2])) : TimeZone(secondsFromGMT: 0)
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let components = DateComponents(
            year: day[0], month: day[1], day: day[2], hour: time[0], minute: time[1], second: time[2]
        )
        guard components.isValidDate(in: calendar) else { return nil }
        return calendar.date(from: components)
    }

    private static func timeZone(_ identifier: String) -> TimeZone? {
        switch identifier {
        case "Etc/GMT", "GMT", "UTC", "Etc/UTC", "Z": return TimeZone(secondsFromGMT: 0)
        default: return TimeZone(identifier: identifier)
        }
    }
}
