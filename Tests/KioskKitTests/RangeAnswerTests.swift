import Foundation
import KioskCore
import Testing

@testable import KioskKit

/// The one rule every ranged answer passes before a byte of it is used (whole files, chunk runs, pack runs and
/// subchunk gaps alike), and the in-memory writer subchunk gaps are fetched into.
@Suite("RangeAnswer")
struct RangeAnswerTests {
    let request = FetchRequest(
        url: URL(string: "http://127.0.0.1:1/v1/content/p/1/a.bin")!, token: "t", offset: 100, expectedLength: 1_000,
        entityTag: nil, partURL: URL(fileURLWithPath: "/tmp/a.bin.part"), end: 200)

    func judge(_ status: Int, _ fields: [String: String], first: Int64 = 100, last: Int64 = 199) -> RangeAnswer {
        RangeAnswer.judge(status: status, field: { fields[$0] }, first: first, last: last, of: request)
    }

    @Test func exactlyTheRangeAskedIsContent() {
        #expect(judge(206, ["Content-Range": "bytes 100-199/1000", "Content-Length": "100"]) == .content(last: 199))
        #expect(judge(206, ["Content-Range": "bytes 100-199/1000"]) == .content(last: 199))
    }

    @Test(arguments: ["bytes 100-198/1000", "bytes 101-199/1000", "bytes 100-199/999", "bytes 100-199/*", "", "x"])
    func anyOtherContentRangeIsRefused(_ field: String) {
        guard case .invalid(.invalidResponse) = judge(206, ["Content-Range": field]) else {
            Issue.record("'\(field)' was taken")
            return
        }
    }

    @Test func aLengthThatDoesNotMatchIsRefused() {
        guard case .invalid = judge(206, ["Content-Range": "bytes 100-199/1000", "Content-Length": "99"]) else {
            Issue.record("a short Content-Length was taken")
            return
        }
    }

    @Test func theWholeFileIsTakenOnlyForARequestOfTheWholeFile() {
        #expect(judge(200, [:]) == .fileChanged)
        let whole = FetchRequest(
            url: request.url, token: "t", offset: 0, expectedLength: 1_000, entityTag: nil, partURL: request.partURL)
        let answer = RangeAnswer.judge(
            status: 200, field: { $0 == "Content-Length" ? "1000" : nil }, first: 0, last: 99, of: whole)
        #expect(answer == .content(last: 999))
    }

    @Test func anErrorStatusIsAnErrorBodyAndJSONIsNeverContent() {
        #expect(judge(503, ["Content-Type": "application/json"]) == .errorBody(status: 503))
        #expect(judge(416, [:]) == .errorBody(status: 416))
        guard case .invalid = judge(206, ["Content-Range": "bytes 100-199/1000", "Content-Type": "application/json"])
        else {
            Issue.record("a JSON answer was taken as content")
            return
        }
        // A JSON file is content like any other.
        let json = FetchRequest(
            url: request.url, token: "t", offset: 100, expectedLength: 1_000, entityTag: nil,
            partURL: URL(fileURLWithPath: "/tmp/Info.json.part"), end: 200)
        let answer = RangeAnswer.judge(
            status: 206, field: { ["Content-Range": "bytes 100-199/1000", "Content-Type": "application/json"][$0] },
            first: 100, last: 199, of: json)
        #expect(answer == .content(last: 199))
    }

    @Test func aMemoryWriterHoldsItsRangeAndRefusesAnyOtherByte() throws {
        let writer = MemoryRangeWriter(range: 100..<104)
        try [UInt8]([1, 2]).withUnsafeBytes { try writer.write($0, at: 100) }
        #expect(writer.bytes == nil)  // not complete yet
        try [UInt8]([3, 4]).withUnsafeBytes { try writer.write($0) }
        #expect(writer.bytes == Data([1, 2, 3, 4]))
        #expect(throws: KioskError.self) { try [UInt8]([5]).withUnsafeBytes { try writer.write($0, at: 104) } }
        #expect(throws: KioskError.self) { try [UInt8]([5]).withUnsafeBytes { try writer.write($0, at: 99) } }
    }
}
