import Foundation
import Testing
@testable import KioskCore

@Suite("HTTP dates")
struct HTTPDateTests {
    /// 2026-11-06T00:00:00Z, the reference "now" for two-digit RFC 850 years.
    static let now = Date(timeIntervalSince1970: 1_793_923_200)

    static func date(_ seconds: Int64) -> Date {
        Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    @Test("formatting IMF-fixdate", arguments: [
        (Int64(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT"),
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
        (951_825_600, "Tue, 29 Feb 2000 12:00:00 GMT"),
        (1_709_164_800, "Thu, 29 Feb 2024 00:00:00 GMT"),
        (1_000_000_000, "Sun, 09 Sep 2001 01:46:40 GMT"),
        (2_147_483_648, "Tue, 19 Jan 2038 03:14:08 GMT"),
        (1_483_142_400 + 86_399, "Sat, 31 Dec 2016 23:59:59 GMT"),
        (-11_670_912_000, "Wed, 01 Mar 1600 00:00:00 GMT"),
        (-2_177_452_800, "Tue, 01 Jan 1901 00:00:00 GMT"),
        (-62_135_596_800, "Mon, 01 Jan 0001 00:00:00 GMT"),
        (253_402_300_799, "Fri, 31 Dec 9999 23:59:59 GMT"),
    ] as [(Int64, String)])
    func format(seconds: Int64, expected: String) {
        #expect(HTTPDate.format(Self.date(seconds)) == expected)
        #expect(HTTPDate.parse(expected) == Self.date(seconds))
    }

    @Test("fractional seconds are truncated toward the past", arguments: [
        (784_111_777.999, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (784_111_777.001, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (-0.5, "Wed, 31 Dec 1969 23:59:59 GMT"),
    ] as [(TimeInterval, String)])
    func truncation(interval: TimeInterval, expected: String) {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: interval)) == expected)
    }

    @Test("out-of-range dates are clamped", arguments: [
        (Date.distantFuture.timeIntervalSince1970, "Mon, 01 Jan 4001 00:00:00 GMT"),
        (253_402_300_800, "Fri, 31 Dec 9999 23:59:59 GMT"),
        (1e300, "Fri, 31 Dec 9999 23:59:59 GMT"),
        (.infinity, "Fri, 31 Dec 9999 23:59:59 GMT"),
        (-62_135_596_801, "Mon, 01 Jan 0001 00:00:00 GMT"),
        (-1e300, "Mon, 01 Jan 0001 00:00:00 GMT"),
        (-.infinity, "Mon, 01 Jan 0001 00:00:00 GMT"),
        (.nan, "Thu, 01 Jan 1970 00:00:00 GMT"),
    ] as [(TimeInterval, String)])
    func clamping(interval: TimeInterval, expected: String) {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: interval)) == expected)
    }

    @Test("the three formats", arguments: [
        ("Sun, 06 Nov 1994 08:49:37 GMT", Int64(784_111_777)),
        ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777),
        ("Sun Nov  6 08:49:37 1994", 784_111_777),
        ("Sun Nov 06 08:49:37 1994", 784_111_777),
        ("  Sun, 06 Nov 1994 08:49:37 GMT\t", 784_111_777),
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
        ("Thu Jan  1 00:00:00 1970", 0),
        ("Tue Feb 29 12:00:00 2000", 951_825_600),
        ("Tuesday, 29-Feb-00 12:00:00 GMT", 951_825_600),
        ("Sat Dec 31 23:59:59 2016", 1_483_228_799),
        ("Sat, 31 Dec 2016 23:59:60 GMT", 1_483_228_800),
        ("Mon, 01 Jan 0001 00:00:00 GMT", -62_135_596_800),
        ("Fri Dec 31 23:59:59 9999", 253_402_300_799),
        ("Mon Jan 12 00:00:00 1970", 11 * 86_400),
    ] as [(String, Int64)])
    func parse(value: String, seconds: Int64) {
        #expect(HTTPDate.parse(value, relativeTo: Self.now) == Self.date(seconds))
    }

    @Test("all months and weekdays", arguments: 0..<400)
    func monthsAndWeekdays(day: Int) throws {
        // Every 23rd day for 400 steps covers every month and weekday many times, across leap years.
        let seconds = Int64(day) * 23 * 86_400 + 951_825_600 + Int64(day) * 3_607
        let formatted = HTTPDate.format(Self.date(seconds))
        #expect(HTTPDate.parse(formatted) == Self.date(seconds))

        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "GMT"))
        let components = calendar.dateComponents([.year, .month, .day, .weekday, .hour, .minute, .second],
                                                 from: Self.date(seconds))
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let weekday = weekdays[try #require(components.weekday) - 1]
        let month = months[try #require(components.month) - 1]
        let day = Self.padded(try #require(components.day), 2)
        let year = Self.padded(try #require(components.year), 4)
        let time = try [components.hour, components.minute, components.second]
            .map { Self.padded(try #require($0), 2) }.joined(separator: ":")
        #expect(formatted == "\(weekday), \(day) \(month) \(year) \(time) GMT")
    }

    static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    @Test("round trip", arguments: [
        Int64(-62_135_596_800), -62_135_596_799, -1_000_000_000_000 / 100, -86_401, -86_400, -1, 0, 1, 59, 60, 3_599,
        86_399, 86_400, 68_256_000, 951_782_399, 951_782_400, 951_868_800, 4_102_444_800, 253_402_300_799,
    ] as [Int64])
    func roundTrip(seconds: Int64) {
        let date = Self.date(seconds)
        #expect(HTTPDate.parse(HTTPDate.format(date)) == date)
    }

    @Test func randomRoundTrip() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10_000 {
            let seconds = Int64.random(in: HTTPDate.minimumSeconds...HTTPDate.maximumSeconds, using: &generator)
            let date = Self.date(seconds)
            #expect(HTTPDate.parse(HTTPDate.format(date)) == date)
        }
    }

    @Test("RFC 850 two-digit years fall in the 100 years ending 50 years from now", arguments: [
        ("Friday, 06-Nov-76 00:00:00 GMT", now, Int64(3_371_846_400)),
        ("Sunday, 06-Nov-77 00:00:00 GMT", now, 247_622_400),
        ("Friday, 06-Nov-26 00:00:00 GMT", now, 1_793_923_200),
        ("Sunday, 06-Nov-94 08:49:37 GMT", now, 784_111_777),
        ("Saturday, 01-Jan-00 00:00:00 GMT", now, 946_684_800),
        ("Thursday, 01-Jan-70 00:00:00 GMT", date(0), 0),
        ("Wednesday, 31-Dec-69 23:59:59 GMT", date(0), -1),
        ("Saturday, 01-Jan-01 00:00:00 GMT", date(4_102_358_400), 4_133_980_800),
        ("Monday, 01-Jan-01 00:00:00 GMT", date(978_307_200), 978_307_200),
        ("Tuesday, 01-Jun-49 00:00:00 GMT", date(978_307_200), 2_506_118_400),
        ("Wednesday, 01-Jun-50 00:00:00 GMT", date(978_307_200), 2_537_654_400),
        ("Sunday, 01-Jun-52 00:00:00 GMT", date(978_307_200), -554_947_200),
        ("Sunday, 01-Jun-49 00:00:00 GMT", date(4_102_358_400), 5_661_792_000),
    ] as [(String, Date, Int64)])
    func twoDigitYears(value: String, now: Date, seconds: Int64) {
        #expect(HTTPDate.parse(value, relativeTo: now) == Self.date(seconds))
    }

    @Test("invalid dates are rejected", arguments: [
        "",
        "   ",
        "Sun, 06 Nov 1994 08:49:37",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:37 gmt",
        "Sun, 06 Nov 1994 08:49:37 GMT+1",
        "Sun, 06 Nov 1994 08:49:37 GMT x",
        "sun, 06 Nov 1994 08:49:37 GMT",
        "Sun, 06 nov 1994 08:49:37 GMT",
        "SUN, 06 NOV 1994 08:49:37 GMT",
        "Sun,06 Nov 1994 08:49:37 GMT",
        "Sun,  06 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994  08:49:37 GMT",
        "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun, 06 Nov 01994 08:49:37 GMT",
        "Sun, 06 November 1994 08:49:37 GMT",
        "Sunday, 06 Nov 1994 08:49:37 GMT",
        "Sun, 06-Nov-94 08:49:37 GMT",
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sunday, 6-Nov-94 08:49:37 GMT",
        "Sun Nov 6 08:49:37 1994",
        "Sun Nov  06 08:49:37 1994",
        "Sun Nov   6 08:49:37 1994",
        "Sun Nov  6 08:49:37 94",
        "Sun Nov  6 08:49:37 1994 GMT",
        "Sunday Nov  6 08:49:37 1994",
        // Wrong weekday.
        "Mon, 06 Nov 1994 08:49:37 GMT",
        "Monday, 06-Nov-94 08:49:37 GMT",
        "Mon Nov  6 08:49:37 1994",
        // Invalid day of month.
        "Sun, 00 Nov 1994 08:49:37 GMT",
        "Thu, 31 Nov 1994 08:49:37 GMT",
        "Tue, 29 Feb 1994 08:49:37 GMT",
        "Thu, 29 Feb 1900 08:49:37 GMT",
        "Wed, 30 Feb 2000 08:49:37 GMT",
        "Fri, 32 Jan 1994 08:49:37 GMT",
        "Mon, 99 Jan 1994 08:49:37 GMT",
        "Sun Nov  0 08:49:37 1994",
        // Invalid month or year.
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 06 Nov 0000 08:49:37 GMT",
        // Invalid time of day.
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 99:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:61 GMT",
        "Sun, 06 Nov 1994 8:49:37 GMT",
        "Sun, 06 Nov 1994 08:49 GMT",
        "Sun, 06 Nov 1994 08-49-37 GMT",
        "Sun, 06 Nov 1994 08:49:37.5 GMT",
        "Sun, 06 Nov 1994 +8:49:37 GMT",
        "Sunday, 06-Nov-94 24:49:37 GMT",
        "Sun Nov  6 08:49:60 1994 x",
        // Other formats.
        "1994-11-06T08:49:37Z",
        "784111777",
        "Sun, 06 Nov 1994 08:49:37 GMT" + String(repeating: " x", count: 100),
    ])
    func invalid(value: String) {
        #expect(HTTPDate.parse(value, relativeTo: Self.now) == nil)
    }
}
