import Testing
@testable import KioskCore

@Suite("multipart/byteranges planning")
struct MultipartByteRangesTests {
    /// A 1000-byte file whose byte at position `i` is `i % 251`.
    static let file: [UInt8] = (0..<1000).map { UInt8($0 % 251) }

    static func range(_ first: Int64, _ last: Int64) -> ByteRange {
        ByteRange(first: first, last: last)
    }

    /// Produces the body the plan describes, as a server streaming it would.
    static func render(_ plan: MultipartByteRangesPlan, file: [UInt8] = file) -> [UInt8] {
        plan.segments.flatMap { segment -> [UInt8] in
            switch segment {
            case let .bytes(bytes): bytes
            case let .file(range): Array(file[Int(range.first)...Int(range.last)])
            }
        }
    }

    @Test func exactFraming() throws {
        let plan = try #require(MultipartByteRangesPlan(
            ranges: [Self.range(0, 3), Self.range(10, 11)], completeLength: 1000,
            partContentType: "application/pdf", boundary: "THIS_STRING_SEPARATES"))
        let firstHeader = Array("""
            --THIS_STRING_SEPARATES\r
            Content-Type: application/pdf\r
            Content-Range: bytes 0-3/1000\r
            \r

            """.utf8)
        let secondHeader = Array("""
            \r
            --THIS_STRING_SEPARATES\r
            Content-Type: application/pdf\r
            Content-Range: bytes 10-11/1000\r
            \r

            """.utf8)
        let closeDelimiter = Array("""
            \r
            --THIS_STRING_SEPARATES--\r

            """.utf8)
        #expect(plan.segments == [
            .bytes(firstHeader), .file(Self.range(0, 3)),
            .bytes(secondHeader), .file(Self.range(10, 11)),
            .bytes(closeDelimiter),
        ])
        let expected = firstHeader + [0, 1, 2, 3] + secondHeader + [10, 11] + closeDelimiter
        #expect(Self.render(plan) == expected)
        #expect(String(decoding: expected, as: UTF8.self).hasPrefix(
            "--THIS_STRING_SEPARATES\r\nContent-Type: application/pdf\r\nContent-Range: bytes 0-3/1000\r\n\r\n"))
        #expect(plan.contentLength == Int64(expected.count))
        #expect(plan.contentLength == 89 + 4 + 93 + 2 + 29)
        #expect(plan.contentType == "multipart/byteranges; boundary=THIS_STRING_SEPARATES")
    }

    @Test("content length equals the streamed bytes", arguments: [
        [range(0, 0)],
        [range(0, 999)],
        [range(0, 0), range(999, 999)],
        [range(500, 599), range(0, 99), range(900, 999)],
        [range(0, 9), range(0, 9), range(0, 9)],
        (0..<16).map { range(Int64($0) * 60, Int64($0) * 60 + 9) },
    ])
    func contentLength(ranges: [ByteRange]) throws {
        for (type, boundary) in [("application/octet-stream", "kiosk-abc"), ("text/plain; charset=utf-8", "x"),
                                 ("image/png", String(repeating: "b", count: 70)), ("a/b", "with space.z")] {
            let plan = try #require(MultipartByteRangesPlan(
                ranges: ranges, completeLength: 1000, partContentType: type, boundary: boundary))
            let body = Self.render(plan)
            #expect(plan.contentLength == Int64(body.count))
            #expect(plan.contentLength == plan.segments.reduce(0) { $0 + $1.length })
            #expect(plan.segments.count == ranges.count * 2 + 1)
            #expect(plan.segments.compactMap { segment -> ByteRange? in
                if case let .file(range) = segment { range } else { nil }
            } == ranges)
            #expect(body.starts(with: Array("--\(boundary)\r\n".utf8)))
            #expect(body.suffix(boundary.utf8.count + 8) == ArraySlice(Array("\r\n--\(boundary)--\r\n".utf8)))
        }
    }

    @Test func eachPartCarriesItsBytes() throws {
        let ranges = [Self.range(250, 260), Self.range(3, 5), Self.range(990, 999)]
        let boundary = MultipartByteRangesPlan.randomBoundary()
        let plan = try #require(MultipartByteRangesPlan(
            ranges: ranges, completeLength: 1000, partContentType: "application/octet-stream", boundary: boundary))
        let body = Self.render(plan)
        var expected: [UInt8] = []
        for (index, range) in ranges.enumerated() {
            if index > 0 { expected += Array("\r\n".utf8) }
            expected += Array(("--\(boundary)\r\nContent-Type: application/octet-stream\r\n"
                + "Content-Range: bytes \(range.first)-\(range.last)/1000\r\n\r\n").utf8)
            expected += Self.file[Int(range.first)...Int(range.last)]
        }
        expected += Array("\r\n--\(boundary)--\r\n".utf8)
        #expect(body == expected)
    }

    @Test("boundaries that are not tokens are quoted", arguments: [
        ("simple", "multipart/byteranges; boundary=simple"),
        ("a'b+c_d-e.f", "multipart/byteranges; boundary=a'b+c_d-e.f"),
        ("with space", "multipart/byteranges; boundary=\"with space\""),
        ("a:b", "multipart/byteranges; boundary=\"a:b\""),
        ("(x)=?/,", "multipart/byteranges; boundary=\"(x)=?/,\""),
    ] as [(String, String)])
    func contentType(boundary: String, expected: String) throws {
        let plan = try #require(MultipartByteRangesPlan(
            ranges: [Self.range(0, 0)], completeLength: 1, partContentType: "a/b", boundary: boundary))
        #expect(plan.contentType == expected)
    }

    @Test("invalid boundaries are refused", arguments: [
        "", "ends with space ", String(repeating: "a", count: 71), "quote\"d", "back\\slash", "semi;colon",
        "new\r\nline", "tab\there", "ümlaut", "star*", "at@",
    ])
    func invalidBoundary(boundary: String) {
        #expect(MultipartByteRangesPlan(
            ranges: [Self.range(0, 0)], completeLength: 1, partContentType: "a/b", boundary: boundary) == nil)
    }

    @Test("invalid part content types are refused", arguments: [
        "", "text/plain\r\nX-Injected: 1", "text/plain\n", "text/plain\r", "a/b\u{0}", "a/b\u{7F}",
    ])
    func invalidContentType(type: String) {
        #expect(MultipartByteRangesPlan(
            ranges: [Self.range(0, 0)], completeLength: 1, partContentType: type, boundary: "b") == nil)
    }

    @Test func rangesMustFitTheRepresentation() {
        #expect(MultipartByteRangesPlan(
            ranges: [], completeLength: 1000, partContentType: "a/b", boundary: "b") == nil)
        #expect(MultipartByteRangesPlan(
            ranges: [Self.range(0, 1000)], completeLength: 1000, partContentType: "a/b", boundary: "b") == nil)
        #expect(MultipartByteRangesPlan(
            ranges: [Self.range(0, 1), Self.range(5, 5)], completeLength: 5, partContentType: "a/b", boundary: "b")
            == nil)
        #expect(MultipartByteRangesPlan(
            ranges: [Self.range(0, 999)], completeLength: 1000, partContentType: "a/b", boundary: "b") != nil)
    }

    @Test func overflowingBodyIsRefused() {
        let whole = Self.range(0, Int64.max - 1)
        #expect(MultipartByteRangesPlan(
            ranges: [whole], completeLength: .max, partContentType: "a/b", boundary: "b") == nil)
        let half = Self.range(0, Int64.max / 4)
        let plan = MultipartByteRangesPlan(
            ranges: [half, half], completeLength: .max, partContentType: "a/b", boundary: "b")
        #expect(plan?.contentLength == plan?.segments.reduce(0) { $0 + $1.length })
    }

    @Test func randomBoundaries() throws {
        var seen = Set<String>()
        for _ in 0..<1000 {
            let boundary = MultipartByteRangesPlan.randomBoundary()
            #expect(boundary.hasPrefix("kiosk-"))
            #expect(boundary.utf8.count == 38)
            #expect(boundary.dropFirst(6).allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
            let plan = try #require(MultipartByteRangesPlan(
                ranges: [Self.range(0, 0)], completeLength: 1, partContentType: "a/b", boundary: boundary))
            #expect(plan.contentType == "multipart/byteranges; boundary=" + boundary)
            seen.insert(boundary)
        }
        #expect(seen.count == 1000)
    }

    @Test func randomBoundaryUsesTheGivenGenerator() {
        var first = SplitMix64(seed: 42)
        var second = SplitMix64(seed: 42)
        #expect(MultipartByteRangesPlan.randomBoundary(using: &first)
            == MultipartByteRangesPlan.randomBoundary(using: &second))
    }
}
