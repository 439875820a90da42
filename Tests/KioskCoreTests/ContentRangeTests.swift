import Testing
@testable import KioskCore

@Suite("Byte ranges and Content-Range")
struct ContentRangeTests {
    static let thirtyDigits = String(repeating: "9", count: 30)

    static func satisfied(_ first: Int64, _ last: Int64, _ length: Int64?) -> ContentRange {
        .satisfied(ByteRange(first: first, last: last), completeLength: length)
    }

    @Test("byte range length", arguments: [
        (Int64(0), Int64(0), Int64(1)),
        (0, 99, 100),
        (500, 999, 500),
        (0, Int64.max - 1, Int64.max),
        (Int64.max - 1, Int64.max - 1, 1),
    ] as [(Int64, Int64, Int64)])
    func length(first: Int64, last: Int64, length: Int64) {
        #expect(ByteRange(first: first, last: last).length == length)
    }

    @Test("formatting", arguments: [
        (satisfied(0, 99, 1000), "bytes 0-99/1000"),
        (satisfied(0, 0, 1), "bytes 0-0/1"),
        (satisfied(999, 999, 1000), "bytes 999-999/1000"),
        (satisfied(0, 99, nil), "bytes 0-99/*"),
        (.unsatisfied(completeLength: 1000), "bytes */1000"),
        (.unsatisfied(completeLength: 0), "bytes */0"),
        (satisfied(0, Int64.max - 1, Int64.max), "bytes 0-9223372036854775806/9223372036854775807"),
    ] as [(ContentRange, String)])
    func format(contentRange: ContentRange, expected: String) {
        #expect(contentRange.headerValue == expected)
        #expect(ContentRange(parsing: expected) == contentRange)
    }

    @Test("lenient-but-valid forms", arguments: [
        ("BYTES 0-99/1000", satisfied(0, 99, 1000)),
        ("Bytes */1000", .unsatisfied(completeLength: 1000)),
        (" bytes 0-99/1000 ", satisfied(0, 99, 1000)),
        ("bytes 000-099/01000", satisfied(0, 99, 1000)),
        ("bytes 0-0/9223372036854775807", satisfied(0, 0, Int64.max)),
        ("bytes */9223372036854775807", .unsatisfied(completeLength: Int64.max)),
        ("bytes 0-9223372036854775806/*", satisfied(0, Int64.max - 1, nil)),
    ] as [(String, ContentRange)])
    func parse(value: String, expected: ContentRange) {
        #expect(ContentRange(parsing: value) == expected)
    }

    @Test("strict parsing rejects", arguments: [
        "",
        "bytes",
        "bytes ",
        "bytes=0-99/1000",
        "bytes  0-99/1000",
        "bytes\t0-99/1000",
        "bytes0-99/1000",
        "items 0-99/1000",
        "bytes 0-99",
        "bytes 0-99/",
        "bytes 0-/1000",
        "bytes -99/1000",
        "bytes 0 -99/1000",
        "bytes 0- 99/1000",
        "bytes 0-99 /1000",
        "bytes 0-99/ 1000",
        "bytes 0-99/1000 x",
        "bytes 0-99/1000,",
        "bytes 0-99/1000, 100-199/1000",
        "bytes +0-99/1000",
        "bytes 0-+99/1000",
        "bytes 0-99/+1000",
        "bytes 0-99/-1000",
        "bytes 0x0-0x63/1000",
        "bytes 0-99/1e3",
        "bytes 100-99/1000",
        "bytes 0-1000/1000",
        "bytes 0-999/999",
        "bytes 0-0/0",
        "bytes */*",
        "bytes *",
        "bytes */",
        "bytes * /1000",
        "bytes */-1",
        "bytes */1000/1000",
        "bytes 0-99/**",
        "bytes 0-99/*1000",
        "bytes 0-9223372036854775807/*",
        "bytes 0-9223372036854775808/*",
        "bytes 0-99/9223372036854775808",
        "bytes */9223372036854775808",
        "bytes 0-99/\(thirtyDigits)",
        "bytes \(thirtyDigits)-\(thirtyDigits)/*",
        "bytes */\(thirtyDigits)",
        "bytes 0-99/" + String(repeating: "0", count: 300) + "1000",
    ])
    func invalid(value: String) {
        #expect(ContentRange(parsing: value) == nil)
    }
}
