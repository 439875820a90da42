import Foundation

/// Formatting and parsing of HTTP dates (RFC 9110 §5.6.7), in whole seconds, UTC.
///
/// Hand-written (no `DateFormatter`), allocation-light and safe to call from any concurrency domain.
public enum HTTPDate {
    /// The earliest instant that can be formatted: 0001-01-01T00:00:00Z.
    static let minimumSeconds: Int64 = -62_135_596_800
    /// The latest instant that can be formatted: 9999-12-31T23:59:59Z.
    static let maximumSeconds: Int64 = 253_402_300_799

    private static let secondsPerDay: Int64 = 86_400
    private static let shortDayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let longDayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    fileprivate static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    /// The longest value worth looking at; every valid HTTP-date is far shorter.
    private static let maximumLength = 64

    /// Formats `date` as an IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    ///
    /// Fractional seconds are truncated toward the past. Dates outside the years 0001–9999
    /// (which a 4-digit year cannot express) are clamped to that range.
    public static func format(_ date: Date) -> String {
        let seconds = wholeSeconds(of: date)
        let days = floorDivide(seconds, secondsPerDay)
        let secondOfDay = Int(seconds - days * secondsPerDay)
        let (year, month, day) = civilDate(fromDays: days)

        var bytes: [UInt8] = []
        bytes.reserveCapacity(29)
        bytes.append(contentsOf: shortDayNames[weekday(fromDays: days)].utf8)
        bytes.append(contentsOf: ", ".utf8)
        appendDigits(day, count: 2, to: &bytes)
        bytes.append(.space)
        bytes.append(contentsOf: monthNames[month - 1].utf8)
        bytes.append(.space)
        appendDigits(year, count: 4, to: &bytes)
        bytes.append(.space)
        appendDigits(secondOfDay / 3600, count: 2, to: &bytes)
        bytes.append(.colon)
        appendDigits(secondOfDay / 60 % 60, count: 2, to: &bytes)
        bytes.append(.colon)
        appendDigits(secondOfDay % 60, count: 2, to: &bytes)
        bytes.append(contentsOf: " GMT".utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses an HTTP-date in any of the three formats a recipient must accept:
    /// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), obsolete RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`)
    /// and asctime (`Sun Nov  6 08:49:37 1994`).
    ///
    /// Names are case-sensitive as in the grammar; surrounding optional whitespace is ignored. The day must exist
    /// in its month, the day name must be the real weekday of the date, hours are 00–23, minutes 00–59 and
    /// seconds 00–60 (a leap second is read as the first second of the next minute). The two-digit RFC 850 year is
    /// placed in the 100-year window ending 50 years after the year of `now`, so it is never read as more than
    /// 50 years in the future (RFC 9110 §5.6.7).
    ///
    /// - Returns: the instant, in whole seconds, or `nil` if `value` is not a valid HTTP-date.
    public static func parse(_ value: String, relativeTo now: Date = Date()) -> Date? {
        parseSeconds(value, relativeTo: now).map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }

    /// Seconds since the Unix epoch of `date`, truncated toward the past and clamped to the formattable range.
    static func wholeSeconds(of date: Date) -> Int64 {
        let interval = date.timeIntervalSince1970
        guard !interval.isNaN else { return 0 }
        let clamped = min(max(interval.rounded(.down), Double(minimumSeconds)), Double(maximumSeconds))
        return Int64(clamped)
    }

    /// Parses an HTTP-date into seconds since the Unix epoch; see ``parse(_:relativeTo:)``.
    static func parseSeconds(_ value: String, relativeTo now: Date) -> Int64? {
        guard let scanner = ASCIIScanner(value, maximumLength: maximumLength) else { return nil }
        return parseIMFFixdate(scanner) ?? parseRFC850Date(scanner, relativeTo: now) ?? parseAsctimeDate(scanner)
    }

    // MARK: - The three formats

    /// `day-name "," SP day SP month SP year SP time-of-day SP "GMT"`
    private static func parseIMFFixdate(_ start: ASCIIScanner) -> Int64? {
        var scanner = start
        guard let weekday = scanner.consume(oneOf: shortDayNames),
              scanner.consume(exactly: ", "),
              let day = scanner.scanFixedDigits(2), scanner.consume(.space),
              let month = scanner.scanMonth(), scanner.consume(.space),
              let year = scanner.scanFixedDigits(4), scanner.consume(.space),
              let time = scanner.scanTimeOfDay(),
              scanner.consume(exactly: " GMT"), scanner.isAtEnd
        else { return nil }
        return seconds(year: year, month: month, day: day, time: time, weekday: weekday)
    }

    /// `day-name-l "," SP day "-" month "-" 2DIGIT SP time-of-day SP "GMT"`
    private static func parseRFC850Date(_ start: ASCIIScanner, relativeTo now: Date) -> Int64? {
        var scanner = start
        guard let weekday = scanner.consume(oneOf: longDayNames),
              scanner.consume(exactly: ", "),
              let day = scanner.scanFixedDigits(2), scanner.consume(.hyphen),
              let month = scanner.scanMonth(), scanner.consume(.hyphen),
              let twoDigitYear = scanner.scanFixedDigits(2), scanner.consume(.space),
              let time = scanner.scanTimeOfDay(),
              scanner.consume(exactly: " GMT"), scanner.isAtEnd
        else { return nil }
        let year = fullYear(fromTwoDigits: twoDigitYear, relativeTo: now)
        return seconds(year: year, month: month, day: day, time: time, weekday: weekday)
    }

    /// `day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time-of-day SP year`
    private static func parseAsctimeDate(_ start: ASCIIScanner) -> Int64? {
        var scanner = start
        guard let weekday = scanner.consume(oneOf: shortDayNames), scanner.consume(.space),
              let month = scanner.scanMonth(), scanner.consume(.space)
        else { return nil }
        let day = scanner.consume(.space) ? scanner.scanFixedDigits(1) : scanner.scanFixedDigits(2)
        guard let day, scanner.consume(.space),
              let time = scanner.scanTimeOfDay(), scanner.consume(.space),
              let year = scanner.scanFixedDigits(4), scanner.isAtEnd
        else { return nil }
        return seconds(year: year, month: month, day: day, time: time, weekday: weekday)
    }

    // MARK: - Calendar arithmetic (proleptic Gregorian, UTC)

    /// Validates the calendar fields and returns seconds since the epoch.
    private static func seconds(year: Int, month: Int, day: Int, time: Int, weekday: Int) -> Int64? {
        guard (1...9999).contains(year), (1...daysInMonth(month, year: year)).contains(day) else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        guard weekday == self.weekday(fromDays: days) else { return nil }
        return days * secondsPerDay + Int64(time)
    }

    /// RFC 9110 §5.6.7: a two-digit year that would be more than 50 years in the future is in the past century.
    /// The year is taken from the 100-year window `currentYear - 49 ... currentYear + 50`.
    private static func fullYear(fromTwoDigits twoDigitYear: Int, relativeTo now: Date) -> Int {
        let currentYear = civilDate(fromDays: floorDivide(wholeSeconds(of: now), secondsPerDay)).year
        let candidate = currentYear - currentYear % 100 + twoDigitYear
        if candidate > currentYear + 50 { return candidate - 100 }
        if candidate <= currentYear - 50 { return candidate + 100 }
        return candidate
    }

    private static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the given date (Howard Hinnant's `days_from_civil`).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`); also used by ``RFC3339``.
    static func civilDate(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    /// 0 = Sunday … 6 = Saturday; 1970-01-01 was a Thursday.
    private static func weekday(fromDays days: Int64) -> Int {
        Int((days % 7 + 11) % 7)
    }

    private static func floorDivide(_ dividend: Int64, _ divisor: Int64) -> Int64 {
        let quotient = dividend / divisor
        return dividend % divisor < 0 ? quotient - 1 : quotient
    }

    private static func appendDigits(_ value: Int, count: Int, to bytes: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<count { divisor *= 10 }
        while divisor > 0 {
            bytes.append(.zero + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }
}

extension ASCIIScanner {
    /// Reads a three-letter month name and returns 1–12.
    fileprivate mutating func scanMonth() -> Int? {
        consume(oneOf: HTTPDate.monthNames).map { $0 + 1 }
    }

    /// Reads `hour ":" minute ":" second` and returns the second of the day (a leap second 60 is allowed).
    fileprivate mutating func scanTimeOfDay() -> Int? {
        guard let hour = scanFixedDigits(2), hour < 24, consume(.colon),
              let minute = scanFixedDigits(2), minute < 60, consume(.colon),
              let second = scanFixedDigits(2), second <= 60
        else { return nil }
        return hour * 3600 + minute * 60 + second
    }
}
