import Foundation
import Testing
@testable import KioskCore

@Suite("Range request evaluation")
struct RangeEvaluationTests {
    static let thirtyDigits = String(repeating: "9", count: 30)
    static let tag = EntityTag(opaqueTag: "sha256-abc")!
    /// Sun, 06 Nov 1994 08:49:37 GMT, plus a fraction that Last-Modified drops.
    static let lastModified = Date(timeIntervalSince1970: 784_111_777.25)
    static let file = RepresentationMetadata(length: 1000, entityTag: tag, lastModified: lastModified)
    static let evaluator = RangeRequestEvaluator()

    static func range(_ first: Int64, _ last: Int64) -> ByteRange {
        ByteRange(first: first, last: last)
    }

    static func evaluate(
        _ range: String?, ifRange: String? = nil, head: Bool = false,
        length: Int64 = 1000, evaluator: RangeRequestEvaluator = evaluator
    ) -> RangeDecision {
        var representation = file
        representation.length = length
        return evaluator.evaluate(method: head, range: range, ifRange: ifRange, representation: representation)
    }

    @Test func defaultCap() {
        #expect(RangeRequestEvaluator().maxRanges == 16)
    }

    @Test("single ranges on a 1000-byte file", arguments: [
        ("bytes=0-0", range(0, 0)),
        ("bytes=0-", range(0, 999)),
        ("bytes=-1", range(999, 999)),
        ("bytes=0-499", range(0, 499)),
        ("bytes=500-999", range(500, 999)),
        ("bytes=500-", range(500, 999)),
        ("bytes=-500", range(500, 999)),
        ("bytes=-1000", range(0, 999)),
        ("bytes=-1001", range(0, 999)),
        ("bytes=-\(thirtyDigits)", range(0, 999)),
        ("bytes=-9223372036854775807", range(0, 999)),
        ("bytes=999-", range(999, 999)),
        ("bytes=999-999", range(999, 999)),
        ("bytes=990-1000", range(990, 999)),
        ("bytes=990-5000", range(990, 999)),
        ("bytes=0-\(thirtyDigits)", range(0, 999)),
        ("bytes=0-9223372036854775807", range(0, 999)),
        ("bytes=10-\(thirtyDigits)", range(10, 999)),
        ("BYTES=0-9", range(0, 9)),
        ("bytes=007-009", range(7, 9)),
        ("bytes=  0-9", nil),
        ("  bytes=0-9  ", range(0, 9)),
        ("bytes=,0-9,", range(0, 9)),
        ("bytes=0-9, 1000-", range(0, 9)),
        ("bytes=2000-3000,0-9,-0", range(0, 9)),
        ("bytes=\(thirtyDigits)-,5-5", range(5, 5)),
    ] as [(String, ByteRange?)])
    func single(header: String, expected: ByteRange?) {
        #expect(Self.evaluate(header) == (expected.map { .single($0) } ?? .full))
    }

    @Test("unsatisfiable ranges on a 1000-byte file", arguments: [
        "bytes=1000-",
        "bytes=1000-1000",
        "bytes=1001-",
        "bytes=1000-2000",
        "bytes=-0",
        "bytes=-0,-0",
        "bytes=\(thirtyDigits)-",
        "bytes=\(thirtyDigits)-\(thirtyDigits)",
        "bytes=9223372036854775807-",
        "bytes=9223372036854775807-9223372036854775807",
        "bytes=1000-,2000-3000,-0",
        "bytes=1000000000000000000000000000-9999999999999999999999999999",
    ])
    func unsatisfiable(header: String) {
        #expect(Self.evaluate(header) == .unsatisfiable)
    }

    @Test("ignored Range headers give the full representation", arguments: [
        "",
        "bytes=",
        "bytes=,",
        "bytes=, ,",
        "items=0-1",
        "bytes 0-1",
        "bytes=5-4",
        "bytes=0-1,5-4",
        "bytes=\(thirtyDigits)-0",
        "bytes=+0-1",
        "bytes=-+1",
        "bytes=0x0-0x10",
        "bytes=0 -1",
        "bytes=0- 1",
        "bytes=- 1",
        "bytes=1-2-3",
        "bytes=0-1;2-3",
        "garbage",
        "bytes=abc",
    ])
    func ignored(header: String) {
        #expect(Self.evaluate(header) == .full)
    }

    @Test func noRangeHeader() {
        #expect(Self.evaluate(nil) == .full)
        #expect(Self.evaluate(nil, ifRange: Self.tag.headerValue) == .full)
        #expect(Self.evaluate(nil, ifRange: "garbage") == .full)
    }

    @Test("multiple ranges keep request order and drop unsatisfiable specs", arguments: [
        ("bytes=0-0,-1", [range(0, 0), range(999, 999)]),
        ("bytes=0-1,,2-3", [range(0, 1), range(2, 3)]),
        ("bytes=0-1, 2-3", [range(0, 1), range(2, 3)]),
        ("bytes=0-1 ,\t2-3", [range(0, 1), range(2, 3)]),
        ("bytes=500-599,0-99", [range(500, 599), range(0, 99)]),
        ("bytes=-100,0-99", [range(900, 999), range(0, 99)]),
        ("bytes=0-99,1000-,200-299", [range(0, 99), range(200, 299)]),
        ("bytes=0-99,-0,200-", [range(0, 99), range(200, 999)]),
        ("bytes=0-99,\(thirtyDigits)-,900-\(thirtyDigits)", [range(0, 99), range(900, 999)]),
        ("bytes=0-0,0-0", [range(0, 0), range(0, 0)]),
        ("bytes=0-499,250-749", [range(0, 499), range(250, 749)]),
        ("bytes=0-499,500-", [range(0, 499), range(500, 999)]),
    ] as [(String, [ByteRange])])
    func multiple(header: String, expected: [ByteRange]) {
        #expect(Self.evaluate(header) == .multiple(expected))
    }

    @Test("overlapping ranges longer than the file together answer 200", arguments: [
        "bytes=0-,0-",
        "bytes=0-999,0-0",
        "bytes=-1000,-1",
        "bytes=0-600,400-999",
        "bytes=0-,-\(thirtyDigits)",
        "bytes=0-\(thirtyDigits),0-\(thirtyDigits)",
        "bytes=" + Array(repeating: "0-99", count: 11).joined(separator: ","),
        "bytes=" + Array(repeating: "-500", count: 3).joined(separator: ","),
    ])
    func amplification(header: String) {
        #expect(Self.evaluate(header) == .full)
    }

    @Test func amplificationAtTheBoundary() {
        let ten = Array(repeating: "0-99", count: 10).joined(separator: ",")
        #expect(Self.evaluate("bytes=" + ten) == .multiple(Array(repeating: Self.range(0, 99), count: 10)))
        #expect(Self.evaluate("bytes=" + ten + ",0-0") == .full)
    }

    @Test func amplificationSumDoesNotOverflow() {
        let huge = Int64.max
        let header = "bytes=0-,0-"
        #expect(Self.evaluate(header, length: huge) == .full)
    }

    @Test func rangeCount() {
        let sixteen = (0..<16).map { "\($0 * 10)-\($0 * 10 + 1)" }
        let expected = (0..<16).map { Self.range(Int64($0) * 10, Int64($0) * 10 + 1) }
        #expect(Self.evaluate("bytes=" + sixteen.joined(separator: ",")) == .multiple(expected))
        #expect(Self.evaluate("bytes=" + (sixteen + ["500-500"]).joined(separator: ",")) == .full)
        // The cap counts range-specs, satisfiable or not.
        #expect(Self.evaluate("bytes=" + (sixteen + ["5000-"]).joined(separator: ",")) == .full)
        #expect(Self.evaluate("bytes=" + Array(repeating: "5000-", count: 17).joined(separator: ",")) == .full)
        #expect(Self.evaluate("bytes=" + Array(repeating: "5000-", count: 16).joined(separator: ",")) == .unsatisfiable)
        // Empty list elements do not count.
        #expect(Self.evaluate("bytes=" + sixteen.joined(separator: ",,,")) == .multiple(expected))
    }

    @Test("a custom cap", arguments: [
        (1, "bytes=0-0", RangeDecision.single(range(0, 0))),
        (1, "bytes=0-0,2-2", .full),
        (2, "bytes=0-0,2-2", .multiple([range(0, 0), range(2, 2)])),
        (2, "bytes=0-0,2-2,4-4", .full),
        (0, "bytes=0-0", .full),
    ] as [(Int, String, RangeDecision)])
    func customCap(maxRanges: Int, header: String, expected: RangeDecision) {
        let evaluator = RangeRequestEvaluator(maxRanges: maxRanges)
        #expect(Self.evaluate(header, evaluator: evaluator) == expected)
    }

    @Test func manyRangesOverTheCapAreIgnored() {
        let header = "bytes=" + (0..<10_000).map { "\($0)-\($0)" }.joined(separator: ",")
        #expect(Self.evaluate(header, length: 1_000_000) == .full)
    }

    @Test func headIgnoresRange() {
        #expect(Self.evaluate("bytes=0-0", head: true) == .full)
        #expect(Self.evaluate("bytes=0-0,5-5", head: true) == .full)
        #expect(Self.evaluate("bytes=5000-", head: true) == .full)
        #expect(Self.evaluate("bytes=0-0", ifRange: Self.tag.headerValue, head: true) == .full)
        #expect(Self.evaluate(nil, head: true) == .full)
    }

    @Test("a zero-length representation satisfies no range", arguments: [
        "bytes=0-", "bytes=0-0", "bytes=-1", "bytes=-0", "bytes=-\(thirtyDigits)", "bytes=0-\(thirtyDigits)",
        "bytes=0-0,-1",
    ])
    func zeroLength(header: String) {
        #expect(Self.evaluate(header, length: 0) == .unsatisfiable)
    }

    @Test func zeroLengthStillIgnoresInvalidHeaders() {
        #expect(Self.evaluate("items=0-0", length: 0) == .full)
        #expect(Self.evaluate("bytes=1-0", length: 0) == .full)
    }

    @Test func oneByteRepresentation() {
        #expect(Self.evaluate("bytes=0-0", length: 1) == .single(Self.range(0, 0)))
        #expect(Self.evaluate("bytes=-5", length: 1) == .single(Self.range(0, 0)))
        #expect(Self.evaluate("bytes=1-", length: 1) == .unsatisfiable)
        #expect(Self.evaluate("bytes=0-0,-1", length: 1) == .full)
    }

    // MARK: If-Range

    @Test("If-Range that holds keeps the range", arguments: [
        "\"sha256-abc\"",
        "  \"sha256-abc\"  ",
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
    ])
    func ifRangeHolds(ifRange: String) {
        #expect(Self.evaluate("bytes=0-9", ifRange: ifRange) == .single(Self.range(0, 9)))
        #expect(Self.evaluate("bytes=5000-", ifRange: ifRange) == .unsatisfiable)
        #expect(Self.evaluate("bytes=0-0,5-5", ifRange: ifRange) == .multiple([Self.range(0, 0), Self.range(5, 5)]))
    }

    @Test("An RFC 850 If-Range date's two-digit year is read against the time the caller passes")
    func ifRangeReadsTwoDigitYearsAgainstTheGivenTime() {
        let rfc850 = "Sunday, 06-Nov-94 08:49:37 GMT"
        let evaluator = Self.evaluator
        let in2026 = Date(timeIntervalSince1970: 1_793_491_200)
        // From 2080, "94" is 2094 (RFC 9110 §5.6.7: not more than 50 years ahead), so it no longer names 1994.
        let in2080 = Date(timeIntervalSince1970: 3_471_292_800)
        #expect(
            evaluator.evaluate(method: false, range: "bytes=0-9", ifRange: rfc850, representation: Self.file, now: in2026)
                == .single(Self.range(0, 9)))
        #expect(
            evaluator.evaluate(method: false, range: "bytes=0-9", ifRange: rfc850, representation: Self.file, now: in2080)
                == .full)
    }

    @Test("If-Range that fails or is malformed serves the full representation", arguments: [
        "\"sha256-abd\"",
        "\"SHA256-ABC\"",
        "\"sha256-ab\"",
        "\"\"",
        "W/\"sha256-abc\"",
        "w/\"sha256-abc\"",
        "sha256-abc",
        "\"sha256-abc",
        "\"sha256-abc\", \"sha256-abc\"",
        "*",
        "",
        "Sun, 06 Nov 1994 08:49:36 GMT",
        "Sun, 06 Nov 1994 08:49:38 GMT",
        "Sat, 05 Nov 1994 08:49:37 GMT",
        "Mon, 06 Nov 1995 08:49:37 GMT",
        "Mon, 07 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:37 +0000",
        "Mon, 06 Nov 1994 08:49:37 GMT",
        "Sun, 6 Nov 1994 08:49:37 GMT",
        "1994-11-06T08:49:37Z",
        "784111777",
        "yesterday",
    ])
    func ifRangeFails(ifRange: String) {
        #expect(Self.evaluate("bytes=0-9", ifRange: ifRange) == .full)
        #expect(Self.evaluate("bytes=5000-", ifRange: ifRange) == .full)
    }

    @Test func ifRangeWithWeakRepresentationTagNeverMatches() {
        var representation = Self.file
        representation.entityTag = EntityTag(opaqueTag: "sha256-abc", isWeak: true)!
        let decision = Self.evaluator.evaluate(
            method: false, range: "bytes=0-9", ifRange: "\"sha256-abc\"", representation: representation)
        #expect(decision == .full)
    }

    @Test func ifRangeDateComparesWholeSeconds() {
        var representation = Self.file
        representation.lastModified = Date(timeIntervalSince1970: 784_111_777.999)
        let decision = Self.evaluator.evaluate(
            method: false, range: "bytes=0-9", ifRange: "Sun, 06 Nov 1994 08:49:37 GMT",
            representation: representation)
        #expect(decision == .single(Self.range(0, 9)))
    }

    @Test func ifRangeDateRoundTripsWithFormat() {
        let now = Date()
        var representation = Self.file
        representation.lastModified = now
        let decision = Self.evaluator.evaluate(
            method: false, range: "bytes=-1", ifRange: HTTPDate.format(now), representation: representation)
        #expect(decision == .single(Self.range(999, 999)))
    }

    @Test func ifRangeIsIgnoredWhenRangeIsInvalid() {
        #expect(Self.evaluate("items=0-9", ifRange: Self.tag.headerValue) == .full)
    }
}
