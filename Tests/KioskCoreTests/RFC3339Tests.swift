import Foundation
import KioskCore
import Testing

@Suite("RFC 3339 date-times")
struct RFC3339Tests {
    static func date(_ seconds: Double) -> Date { Date(timeIntervalSince1970: seconds) }

    @Test(
        "formatting uses the proleptic Gregorian calendar, whole seconds truncated",
        arguments: [
            (1_793_491_200.0, "2026-11-01T00:00:00Z"),
            (1_793_491_200.999, "2026-11-01T00:00:00Z"),
            (-0.5, "1969-12-31T23:59:59Z"),
            (951_825_600, "2000-02-29T12:00:00Z"),
            (-12_219_292_800, "1582-10-15T00:00:00Z"),
            // Found by the info-json fuzz target: Foundation's ISO 8601 formatter printed these Julian dates,
            // ten days (and, for year 0, two days) away from what `date(from:)` reads back.
            (-12_219_379_200, "1582-10-14T00:00:00Z"),
            (-14_831_769_600, "1500-01-01T00:00:00Z"),
            (-62_135_596_800, "0001-01-01T00:00:00Z"),
            (-62_167_219_200, "0000-01-01T00:00:00Z"),
            (253_402_300_799, "9999-12-31T23:59:59Z"),
        ] as [(Double, String)])
    func format(seconds: Double, expected: String) {
        #expect(RFC3339.string(from: Self.date(seconds)) == expected)
        #expect(RFC3339.date(from: expected) == Self.date(seconds.rounded(.down)))
    }

    @Test(
        "dates outside the years 0000–9999 are clamped",
        arguments: [
            (-62_167_219_201.0, "0000-01-01T00:00:00Z"),
            (-1e20, "0000-01-01T00:00:00Z"),
            (253_402_300_800, "9999-12-31T23:59:59Z"),
            (.infinity, "9999-12-31T23:59:59Z"),
        ] as [(Double, String)])
    func clamped(seconds: Double, expected: String) {
        #expect(RFC3339.string(from: Self.date(seconds)) == expected)
    }

    @Test(
        "every parsed date prints back to the same instant, offsets folded into UTC",
        arguments: [
            "0000-03-01T00:00:00Z", "1066-10-14T09:00:00Z", "1600-02-29T23:59:59Z", "2016-12-31T23:59:59Z",
            "1582-10-04T12:00:00+02:00",
        ])
    func roundTrip(text: String) throws {
        let date = try #require(RFC3339.date(from: text))
        #expect(RFC3339.date(from: RFC3339.string(from: date)) == date)
    }
}
