import Foundation

/// RFC 3339 date-times, the wire contract's time format.
///
/// Parsing is strict: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` with every field in range (no 31st of November,
/// no hour 24), so a typo in an `Info.json` date is reported instead of silently rolling over.
public enum RFC3339 {
    /// The earliest instant with a four-digit year: 0000-01-01T00:00:00Z.
    static let minimumSeconds: Int64 = -62_167_219_200

    /// Formats a date as `2026-11-01T00:00:00Z` (UTC, whole seconds truncated toward the past).
    ///
    /// Uses the proleptic Gregorian calendar, like ``date(from:)``, so every date that parses prints back to
    /// itself (Foundation's formatter switches to the Julian calendar before 1582). Dates outside the years
    /// 0000–9999, which a four-digit year cannot express, are clamped to that range.
    public static func string(from date: Date) -> String {
        let interval = date.timeIntervalSince1970.rounded(.down)
        let bounded = min(max(interval, Double(minimumSeconds)), Double(HTTPDate.maximumSeconds))
        let seconds = interval.isNaN ? 0 : Int64(bounded)
        let secondOfDay = (seconds % 86_400 + 86_400) % 86_400
        let (year, month, day) = HTTPDate.civilDate(fromDays: (seconds - secondOfDay) / 86_400)
        func digits(_ value: some BinaryInteger, _ count: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, count - text.count)) + text
        }
        return "\(digits(year, 4))-\(digits(month, 2))-\(digits(day, 2))T"
            + "\(digits(secondOfDay / 3600, 2)):\(digits(secondOfDay / 60 % 60, 2)):\(digits(secondOfDay % 60, 2))Z"
    }

    /// Parses an RFC 3339 date-time; nil when it is malformed or names an impossible moment.
    public static func date(from text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 64 else { return nil }
        var index = 0
        func number(_ width: Int) -> Int? {
            guard index + width <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<(index + width)] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += width
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            expect("Tt"), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
            let second = number(2)
        else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour <= 23,
            minute <= 59, second <= 60
        else { return nil }
        var fraction = 0.0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 0.1
            let start = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                fraction += Double(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offsetSeconds = 0
        if expect("Zz") {
            offsetSeconds = 0
        } else {
            guard index < bytes.count else { return nil }
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            guard expect("+-"), let offsetHours = number(2), expect(":"), let offsetMinutes = number(2),
                offsetHours <= 23, offsetMinutes <= 59
            else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        }
        guard index == bytes.count else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Date(timeIntervalSince1970: TimeInterval(seconds) + fraction)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
