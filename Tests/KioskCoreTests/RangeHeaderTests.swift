import Testing
@testable import KioskCore

@Suite("Range header parsing")
struct RangeHeaderTests {
    static let thirtyDigits = String(repeating: "9", count: 30)
    static let top = Int64.max

    @Test("valid headers", arguments: [
        ("bytes=0-0", [RangeSpec.closed(first: 0, last: 0)]),
        ("bytes=0-499", [.closed(first: 0, last: 499)]),
        ("bytes=0-", [.from(first: 0)]),
        ("bytes=9500-", [.from(first: 9500)]),
        ("bytes=-1", [.suffix(length: 1)]),
        ("bytes=-0", [.suffix(length: 0)]),
        ("bytes=-500", [.suffix(length: 500)]),
        ("bytes=5-5", [.closed(first: 5, last: 5)]),
        ("bytes=007-010", [.closed(first: 7, last: 10)]),
        ("BYTES=0-1", [.closed(first: 0, last: 1)]),
        ("Bytes=0-1", [.closed(first: 0, last: 1)]),
        ("bYtEs=0-1", [.closed(first: 0, last: 1)]),
        ("bytes=0-1,2-3", [.closed(first: 0, last: 1), .closed(first: 2, last: 3)]),
        ("bytes=0-1, 2-3", [.closed(first: 0, last: 1), .closed(first: 2, last: 3)]),
        ("bytes=0-1 ,2-3", [.closed(first: 0, last: 1), .closed(first: 2, last: 3)]),
        ("bytes=0-1 \t, \t2-3", [.closed(first: 0, last: 1), .closed(first: 2, last: 3)]),
        ("bytes=0-1,,2-3", [.closed(first: 0, last: 1), .closed(first: 2, last: 3)]),
        ("bytes=0-1, ,2-3", [.closed(first: 0, last: 1), .closed(first: 2, last: 3)]),
        ("bytes=,0-1", [.closed(first: 0, last: 1)]),
        ("bytes=, 0-1", [.closed(first: 0, last: 1)]),
        ("bytes=0-1,", [.closed(first: 0, last: 1)]),
        ("bytes=0-1, ", [.closed(first: 0, last: 1)]),
        ("bytes=,,0-1,,", [.closed(first: 0, last: 1)]),
        ("  bytes=0-1  ", [.closed(first: 0, last: 1)]),
        ("\tbytes=0-1\t", [.closed(first: 0, last: 1)]),
        ("bytes=-5,0-0,10-", [.suffix(length: 5), .closed(first: 0, last: 0), .from(first: 10)]),
        ("bytes=500-600,0-999,500-", [.closed(first: 500, last: 600), .closed(first: 0, last: 999), .from(first: 500)]),
        ("bytes=0-0,0-0", [.closed(first: 0, last: 0), .closed(first: 0, last: 0)]),
        ("bytes=9223372036854775807-", [.from(first: top)]),
        ("bytes=-9223372036854775807", [.suffix(length: top)]),
        ("bytes=0-9223372036854775807", [.closed(first: 0, last: top)]),
        ("bytes=9223372036854775806-9223372036854775807", [.closed(first: top - 1, last: top)]),
    ] as [(String, [RangeSpec])])
    func valid(header: String, expected: [RangeSpec]) {
        #expect(RangeHeader(parsing: header)?.specs == expected)
    }

    @Test("invalid headers are ignored", arguments: [
        "",
        " ",
        "bytes",
        "bytes=",
        "bytes= ",
        "bytes=,",
        "bytes=,,",
        "bytes=, ,",
        "bytes 0-1",
        "bytes =0-1",
        "bytes= 0-1",
        "bytes:0-1",
        "items=0-1",
        "byte=0-1",
        "bytesx=0-1",
        "none",
        "bytes=5-4",
        "bytes=1000-0",
        "bytes=1-0,0-1",
        "bytes=0-1,5-4",
        "bytes=-",
        "bytes=--1",
        "bytes=-1-",
        "bytes=-1-2",
        "bytes=0-1-2",
        "bytes=0--1",
        "bytes=+1-2",
        "bytes=1-+2",
        "bytes=-+2",
        "bytes=0x10-0x20",
        "bytes=0x10-",
        "bytes=1e3-",
        "bytes=1.5-2",
        "bytes=1 -2",
        "bytes=1- 2",
        "bytes=- 2",
        "bytes=1 2-3",
        "bytes=0-1 2-3",
        "bytes=0-1;2-3",
        "bytes=a-b",
        "bytes=0-1,x",
        "bytes=٣-٤",
        "bytes=０-１",
        "bytes=0-1\r\n",
        "bytes=0-1\u{0}",
        "bytes=\u{0}0-1",
        "bytes=0-1=",
        "bytes==0-1",
    ])
    func invalid(header: String) {
        #expect(RangeHeader(parsing: header) == nil)
    }

    @Test("numbers past Int64.max saturate in every position", arguments: [
        ("bytes=\(thirtyDigits)-", [RangeSpec.from(first: top)]),
        ("bytes=0-\(thirtyDigits)", [.closed(first: 0, last: top)]),
        ("bytes=-\(thirtyDigits)", [.suffix(length: top)]),
        ("bytes=5-\(thirtyDigits)", [.closed(first: 5, last: top)]),
        ("bytes=\(thirtyDigits)-\(thirtyDigits)", [.closed(first: top, last: top)]),
        ("bytes=9223372036854775808-", [.from(first: top)]),
        ("bytes=-9223372036854775808", [.suffix(length: top)]),
        ("bytes=0-9223372036854775808", [.closed(first: 0, last: top)]),
        ("bytes=9223372036854775807-9223372036854775808", [.closed(first: top, last: top)]),
        ("bytes=1000000000000000000000000000-9999999999999999999999999999", [.closed(first: top, last: top)]),
        ("bytes=\(String(repeating: "0", count: 40))1-2", [.closed(first: 1, last: 2)]),
        ("bytes=0-1,\(thirtyDigits)-,-\(thirtyDigits)", [.closed(first: 0, last: 1), .from(first: top), .suffix(length: top)]),
    ] as [(String, [RangeSpec])])
    func saturation(header: String, expected: [RangeSpec]) {
        #expect(RangeHeader(parsing: header)?.specs == expected)
    }

    @Test("first > last is detected exactly even when both saturate", arguments: [
        "bytes=\(thirtyDigits)-0",
        "bytes=\(thirtyDigits)-9223372036854775807",
        "bytes=9223372036854775808-9223372036854775807",
        "bytes=99999999999999999999999999999-9999999999999999999999999999",
        "bytes=20000000000000000000000000000-10000000000000000000000000000",
        "bytes=\(thirtyDigits)-\(thirtyDigits.dropLast())8",
    ])
    func saturatedFirstGreaterThanLast(header: String) {
        #expect(RangeHeader(parsing: header) == nil)
    }

    @Test func lengthLimit() {
        let limit = RangeHeader.defaultMaximumLength
        let padded = "bytes=0-1" + String(repeating: ",", count: limit - 9)
        #expect(padded.utf8.count == limit)
        #expect(RangeHeader(parsing: padded)?.specs == [.closed(first: 0, last: 1)])
        #expect(RangeHeader(parsing: padded + ",") == nil)
        #expect(RangeHeader(parsing: "bytes=0-1", maximumLength: 8) == nil)
        #expect(RangeHeader(parsing: "bytes=0-1", maximumLength: 9) != nil)
    }

    @Test func specCountLimit() {
        let specs = (0..<RangeHeader.defaultMaximumSpecCount).map { "\($0)-\($0)" }
        let atLimit = "bytes=" + specs.joined(separator: ",")
        #expect(RangeHeader(parsing: atLimit)?.specs.count == RangeHeader.defaultMaximumSpecCount)
        #expect(RangeHeader(parsing: atLimit + ",0-0") == nil)
        #expect(RangeHeader(parsing: "bytes=0-0,1-1,2-2", maximumSpecCount: 3)?.specs.count == 3)
        #expect(RangeHeader(parsing: "bytes=0-0,1-1,2-2", maximumSpecCount: 2) == nil)
        #expect(RangeHeader(parsing: "bytes=0-0", maximumSpecCount: 0) == nil)
        #expect(RangeHeader(parsing: "bytes=0-0,,,,,,,,,,", maximumSpecCount: 1)?.specs.count == 1)
    }

    @Test func hugeHeaderIsIgnored() {
        let huge = "bytes=" + String(repeating: "0-0,", count: 1_000_000)
        #expect(RangeHeader(parsing: huge) == nil)
    }

    @Test("resolving range-specs against a length", arguments: [
        // (spec, representation length, expected first, expected last) with -1 meaning unsatisfiable
        (RangeSpec.closed(first: 0, last: 0), Int64(1000), Int64(0), Int64(0)),
        (.closed(first: 0, last: 999), 1000, 0, 999),
        (.closed(first: 0, last: 1000), 1000, 0, 999),
        (.closed(first: 500, last: Int64.max), 1000, 500, 999),
        (.closed(first: 999, last: 999), 1000, 999, 999),
        (.closed(first: 1000, last: 1000), 1000, -1, -1),
        (.closed(first: Int64.max, last: Int64.max), 1000, -1, -1),
        (.closed(first: 5, last: 4), 1000, -1, -1),
        (.closed(first: -1, last: 4), 1000, -1, -1),
        (.from(first: 0), 1000, 0, 999),
        (.from(first: 999), 1000, 999, 999),
        (.from(first: 1000), 1000, -1, -1),
        (.from(first: 1001), 1000, -1, -1),
        (.from(first: Int64.max), 1000, -1, -1),
        (.from(first: -3), 1000, -1, -1),
        (.suffix(length: 1), 1000, 999, 999),
        (.suffix(length: 500), 1000, 500, 999),
        (.suffix(length: 1000), 1000, 0, 999),
        (.suffix(length: 1001), 1000, 0, 999),
        (.suffix(length: Int64.max), 1000, 0, 999),
        (.suffix(length: 0), 1000, -1, -1),
        (.suffix(length: -5), 1000, -1, -1),
        (.from(first: 0), 0, -1, -1),
        (.closed(first: 0, last: 0), 0, -1, -1),
        (.suffix(length: 1), 0, -1, -1),
        (.suffix(length: Int64.max), 0, -1, -1),
        (.from(first: 0), Int64.max, 0, Int64.max - 1),
        (.suffix(length: Int64.max), Int64.max, 0, Int64.max - 1),
        (.closed(first: Int64.max - 2, last: Int64.max), Int64.max, Int64.max - 2, Int64.max - 1),
    ] as [(RangeSpec, Int64, Int64, Int64)])
    func resolve(spec: RangeSpec, length: Int64, first: Int64, last: Int64) {
        let expected = first < 0 ? nil : ByteRange(first: first, last: last)
        #expect(spec.resolved(forLength: length) == expected)
    }
}
