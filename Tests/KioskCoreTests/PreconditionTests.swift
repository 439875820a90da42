import Foundation
import Testing

@testable import KioskCore

@Suite("Precondition evaluation (RFC 9110 §13)")
struct PreconditionTests {
    static let tag = EntityTag(opaqueTag: "sha256-abc")!
    /// Sun, 06 Nov 1994 08:49:37 GMT, plus a fraction that Last-Modified drops.
    static let lastModified = Date(timeIntervalSince1970: 784_111_777.25)
    static let file = RepresentationMetadata(length: 1000, entityTag: tag, lastModified: lastModified)
    /// 2026-11-18: places the RFC 850 year 94 in 1994.
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    /// What one field, on its own, says about the file.
    enum Verdict: Sendable {
        /// The field is not sent.
        case absent
        /// The condition is true (If-Match, If-Unmodified-Since: go on; If-None-Match, If-Modified-Since: modified).
        case holds
        /// The condition is false (412 for If-Match and If-Unmodified-Since, 304 for the other two).
        case fails
        /// Sent, but to be ignored: not a valid HTTP-date.
        case ignored
    }

    /// A field value and its verdict against ``file``.
    struct Value: Sendable, CustomTestStringConvertible {
        var text: String?
        var verdict: Verdict
        init(_ text: String?, _ verdict: Verdict) {
            self.text = text
            self.verdict = verdict
        }
        var testDescription: String { "\(text.map { "'\($0)'" } ?? "absent") → \(verdict)" }
    }

    static let ifMatchValues: [Value] = [
        Value(nil, .absent),
        Value(#""sha256-abc""#, .holds),
        Value("*", .holds),
        Value(" * ", .holds),
        Value(#""x", "sha256-abc""#, .holds),
        Value(#" "x" ,, W/"y","sha256-abc" "#, .holds),
        Value(#"W/"sha256-abc""#, .fails),
        Value(#""x""#, .fails),
        Value(#""x", W/"sha256-abc""#, .fails),
        Value(#""SHA256-ABC""#, .fails),
        Value(#""sha256-abc"x"#, .fails),
        Value("sha256-abc", .fails),
        Value(#"*, "sha256-abc""#, .fails),
        Value("", .fails),
    ]

    static let ifUnmodifiedSinceValues: [Value] = [
        Value(nil, .absent),
        Value("Sun, 06 Nov 1994 08:49:37 GMT", .holds),
        Value("Sun, 06 Nov 1994 08:49:38 GMT", .holds),
        Value("Sunday, 06-Nov-94 08:49:37 GMT", .holds),
        Value("Sun Nov  6 08:49:37 1994", .holds),
        Value("Sun, 06 Nov 1994 08:49:36 GMT", .fails),
        Value("Sat, 05 Nov 1994 08:49:37 GMT", .fails),
        Value("Sunday, 06-Nov-94 08:49:36 GMT", .fails),
        Value("yesterday", .ignored),
        Value("Mon, 06 Nov 1994 08:49:37 GMT", .ignored),
        Value("Sun, 06 Nov 1994 08:49:36 gmt", .ignored),
        Value("Sun, 06 Nov 1994 08:49:36 GMT, Sun, 06 Nov 1994 08:49:36 GMT", .ignored),
        Value("", .ignored),
    ]

    static let ifNoneMatchValues: [Value] = [
        Value(nil, .absent),
        Value(#""sha256-abc""#, .fails),
        Value(#"W/"sha256-abc""#, .fails),
        Value("*", .fails),
        Value(#""x", W/"sha256-abc""#, .fails),
        Value(#"W/"x" , "y",, "sha256-abc""#, .fails),
        Value(#""x""#, .holds),
        Value(#"W/"x", "y""#, .holds),
        Value(#""SHA256-ABC""#, .holds),
        Value(#""""#, .holds),
        Value("sha256-abc", .holds),
        Value(#"*, "sha256-abc""#, .holds),
        Value("", .holds),
    ]

    static let ifModifiedSinceValues: [Value] = [
        Value(nil, .absent),
        Value("Sun, 06 Nov 1994 08:49:37 GMT", .fails),
        Value("Sun, 06 Nov 1994 08:49:38 GMT", .fails),
        Value("Sunday, 06-Nov-94 08:49:37 GMT", .fails),
        Value("Sun Nov  6 08:49:37 1994", .fails),
        Value("Sun, 06 Nov 1994 08:49:36 GMT", .holds),
        Value("Sat, 05 Nov 1994 08:49:37 GMT", .holds),
        Value("not a date", .ignored),
        Value("Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT", .ignored),
        Value("Sun, 31 Nov 1994 08:49:37 GMT", .ignored),
        Value("", .ignored),
    ]

    static func evaluate(
        ifMatch: String? = nil, ifNoneMatch: String? = nil, ifModifiedSince: String? = nil,
        ifUnmodifiedSince: String? = nil, representation: RepresentationMetadata = file
    ) -> PreconditionDecision {
        RequestPreconditions(
            ifMatch: ifMatch, ifNoneMatch: ifNoneMatch, ifModifiedSince: ifModifiedSince,
            ifUnmodifiedSince: ifUnmodifiedSince
        ).evaluate(for: representation, now: now)
    }

    /// RFC 9110 §13.2.2 steps 1–4, from the verdicts of the four fields.
    static func expected(ifMatch: Verdict, ifUnmodifiedSince: Verdict, ifNoneMatch: Verdict, ifModifiedSince: Verdict)
        -> PreconditionDecision
    {
        // Step 1, or step 2 when If-Match is absent.
        if ifMatch != .absent {
            if ifMatch == .fails { return .preconditionFailed(.ifMatch) }
        } else if ifUnmodifiedSince == .fails {
            return .preconditionFailed(.ifUnmodifiedSince)
        }
        // Step 3, or step 4 when If-None-Match is absent.
        if ifNoneMatch != .absent {
            if ifNoneMatch == .fails { return .notModified(.ifNoneMatch) }
        } else if ifModifiedSince == .fails {
            return .notModified(.ifModifiedSince)
        }
        return .proceed
    }

    @Test func noPreconditionsProceed() {
        #expect(Self.evaluate() == .proceed)
    }

    @Test("If-Match alone: strong comparison, *, lists", arguments: ifMatchValues)
    func ifMatch(value: Value) {
        let expected: PreconditionDecision = value.verdict == .fails ? .preconditionFailed(.ifMatch) : .proceed
        #expect(Self.evaluate(ifMatch: value.text) == expected)
    }

    @Test("If-Unmodified-Since alone", arguments: ifUnmodifiedSinceValues)
    func ifUnmodifiedSince(value: Value) {
        let expected: PreconditionDecision =
            value.verdict == .fails ? .preconditionFailed(.ifUnmodifiedSince) : .proceed
        #expect(Self.evaluate(ifUnmodifiedSince: value.text) == expected)
    }

    @Test("If-None-Match alone: weak comparison, *, lists", arguments: ifNoneMatchValues)
    func ifNoneMatch(value: Value) {
        let expected: PreconditionDecision = value.verdict == .fails ? .notModified(.ifNoneMatch) : .proceed
        #expect(Self.evaluate(ifNoneMatch: value.text) == expected)
    }

    @Test("If-Modified-Since alone", arguments: ifModifiedSinceValues)
    func ifModifiedSince(value: Value) {
        let expected: PreconditionDecision = value.verdict == .fails ? .notModified(.ifModifiedSince) : .proceed
        #expect(Self.evaluate(ifModifiedSince: value.text) == expected)
    }

    /// Every combination of the four tables: present or absent, matching or not, invalid, `*`, weak and strong,
    /// lists; the answer follows the §13.2.2 order.
    @Test func everyCombinationFollowsTheOrderOfEvaluation() {
        var combinations = 0
        for ifMatch in Self.ifMatchValues {
            for ifUnmodifiedSince in Self.ifUnmodifiedSinceValues {
                for ifNoneMatch in Self.ifNoneMatchValues {
                    for ifModifiedSince in Self.ifModifiedSinceValues {
                        let decision = Self.evaluate(
                            ifMatch: ifMatch.text, ifNoneMatch: ifNoneMatch.text, ifModifiedSince: ifModifiedSince.text,
                            ifUnmodifiedSince: ifUnmodifiedSince.text)
                        let expected = Self.expected(
                            ifMatch: ifMatch.verdict, ifUnmodifiedSince: ifUnmodifiedSince.verdict,
                            ifNoneMatch: ifNoneMatch.verdict, ifModifiedSince: ifModifiedSince.verdict)
                        if decision != expected {
                            Issue.record(
                                """
                                If-Match \(ifMatch.testDescription), If-Unmodified-Since \(ifUnmodifiedSince.testDescription), \
                                If-None-Match \(ifNoneMatch.testDescription), If-Modified-Since \(ifModifiedSince.testDescription): \
                                \(decision), expected \(expected)
                                """)
                        }
                        combinations += 1
                    }
                }
            }
        }
        #expect(combinations == 14 * 13 * 13 * 11)
    }

    @Test(
        "the §13.2.2 order, spelled out",
        arguments: [
            // If-Match beats If-Unmodified-Since, which it makes ignored.
            (
                RequestPreconditions(ifMatch: #""sha256-abc""#, ifUnmodifiedSince: "Sat, 05 Nov 1994 08:49:37 GMT"),
                .proceed
            ),
            (
                RequestPreconditions(ifMatch: #""x""#, ifUnmodifiedSince: "Sun, 06 Nov 1994 08:49:37 GMT"),
                .preconditionFailed(.ifMatch)
            ),
            // 412 before 304.
            (RequestPreconditions(ifMatch: #""x""#, ifNoneMatch: "*"), .preconditionFailed(.ifMatch)),
            (
                RequestPreconditions(
                    ifModifiedSince: "Sun, 06 Nov 1994 08:49:37 GMT", ifUnmodifiedSince: "Sat, 05 Nov 1994 08:49:37 GMT"
                ),
                .preconditionFailed(.ifUnmodifiedSince)
            ),
            // If-None-Match makes If-Modified-Since ignored, even when it is malformed.
            (RequestPreconditions(ifNoneMatch: #""x""#, ifModifiedSince: "Sun, 06 Nov 1994 08:49:37 GMT"), .proceed),
            (RequestPreconditions(ifNoneMatch: "garbage", ifModifiedSince: "Sun, 06 Nov 1994 08:49:37 GMT"), .proceed),
            (
                RequestPreconditions(ifNoneMatch: #"W/"sha256-abc""#, ifModifiedSince: "Sat, 05 Nov 1994 08:49:37 GMT"),
                .notModified(.ifNoneMatch)
            ),
            // Both passing steps lead to the 304 steps.
            (RequestPreconditions(ifMatch: "*", ifNoneMatch: #""sha256-abc""#), .notModified(.ifNoneMatch)),
            (
                RequestPreconditions(
                    ifModifiedSince: "Sun, 06 Nov 1994 08:49:37 GMT", ifUnmodifiedSince: "Sun, 06 Nov 1994 08:49:37 GMT"
                ),
                .notModified(.ifModifiedSince)
            ),
        ] as [(RequestPreconditions, PreconditionDecision)])
    func order(preconditions: RequestPreconditions, expected: PreconditionDecision) {
        #expect(preconditions.evaluate(for: Self.file, now: Self.now) == expected)
    }

    @Test func aWeakRepresentationTagNeverMatchesIfMatchButMatchesIfNoneMatch() {
        var weak = Self.file
        weak.entityTag = EntityTag(opaqueTag: "sha256-abc", isWeak: true)!
        #expect(Self.evaluate(ifMatch: #"W/"sha256-abc""#, representation: weak) == .preconditionFailed(.ifMatch))
        #expect(Self.evaluate(ifMatch: #""sha256-abc""#, representation: weak) == .preconditionFailed(.ifMatch))
        #expect(Self.evaluate(ifMatch: "*", representation: weak) == .proceed)
        #expect(Self.evaluate(ifNoneMatch: #""sha256-abc""#, representation: weak) == .notModified(.ifNoneMatch))
    }

    @Test func datesCompareInWholeSecondsAsSent() {
        var file = Self.file
        file.lastModified = Date(timeIntervalSince1970: 784_111_777.999)
        #expect(
            Self.evaluate(ifModifiedSince: "Sun, 06 Nov 1994 08:49:37 GMT", representation: file)
                == .notModified(.ifModifiedSince))
        #expect(Self.evaluate(ifUnmodifiedSince: "Sun, 06 Nov 1994 08:49:37 GMT", representation: file) == .proceed)
        file.lastModified = Date(timeIntervalSince1970: 784_111_778)
        #expect(Self.evaluate(ifModifiedSince: "Sun, 06 Nov 1994 08:49:37 GMT", representation: file) == .proceed)
        #expect(
            Self.evaluate(ifUnmodifiedSince: "Sun, 06 Nov 1994 08:49:37 GMT", representation: file)
                == .preconditionFailed(.ifUnmodifiedSince))
    }

    @Test func anOverlongFieldMatchesNothing() {
        let long = Array(repeating: #""x""#, count: 3000).joined(separator: ",") + #","sha256-abc""#
        #expect(Self.evaluate(ifNoneMatch: long) == .proceed)
        #expect(Self.evaluate(ifMatch: long) == .preconditionFailed(.ifMatch))
    }
}
