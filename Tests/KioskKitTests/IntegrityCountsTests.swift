import Foundation
import Testing

@testable import KioskKit

/// The rule for bytes that fail their hash: one more try per file (journaled) and per chunk (for the transfer),
/// then an integrity error naming the file.
@Suite("IntegrityCounts")
struct IntegrityCountsTests {
    func failure(_ path: String, chunk: Int? = nil) -> IntegrityFailure {
        IntegrityFailure(
            path: path, chunk: chunk, expectedSHA256: String(repeating: "a", count: 64),
            actualSHA256: String(repeating: "b", count: 64))
    }

    @Test func aFileIsFetchedAgainOnceThenIsAnIntegrityErrorAndItsCountStartsOver() {
        var counts = IntegrityCounts()
        let first = counts.count(failure("Contents/a.bin"), productID: "p1")
        #expect(first == .init(change: .integrityFailures(path: "Contents/a.bin", count: 1), error: nil))
        let second = counts.count(failure("Contents/a.bin"), productID: "p1")
        guard case .integrity(let productID, let path, let expected, let actual)? = second.error else {
            Issue.record("expected an integrity error, got \(second)")
            return
        }
        #expect(productID == "p1" && path == "Contents/a.bin")
        #expect(expected == String(repeating: "a", count: 64) && actual == String(repeating: "b", count: 64))
        // Journaled as 0: a resume of the failed download gets one retry again.
        #expect(second.change == .integrityFailures(path: "Contents/a.bin", count: 0))
        #expect(counts.count(failure("Contents/a.bin"), productID: "p1").error == nil)
    }

    @Test func aJournaledCountCarriesOverToTheNextTransfer() {
        var counts = IntegrityCounts(files: ["a.bin": 1])
        #expect(counts.count(failure("a.bin"), productID: "p1").error != nil)
        #expect(counts.count(failure("b.bin"), productID: "p1").error == nil)
    }

    @Test func eachChunkHasItsOwnCountNotJournaledAndApartFromItsFiles() {
        var counts = IntegrityCounts(files: ["a.bin": 0])
        #expect(counts.count(failure("a.bin", chunk: 3), productID: "p1") == .init())  // fetched again, no journal
        #expect(counts.count(failure("a.bin", chunk: 4), productID: "p1").error == nil)  // another chunk
        #expect(counts.count(failure("b.bin", chunk: 3), productID: "p1").error == nil)  // another file
        let second = counts.count(failure("a.bin", chunk: 3), productID: "p1")
        guard case .integrity(_, let path, _, _)? = second.error, second.change == nil else {
            Issue.record("the second failure of chunk 3 is not an integrity error: \(second)")
            return
        }
        #expect(path == "a.bin")
        // The file's own count is not touched by its chunks.
        #expect(counts.count(failure("a.bin"), productID: "p1").error == nil)
        // A new transfer starts with new counts: every chunk gets one retry again.
        var next = IntegrityCounts(files: ["a.bin": 0])
        #expect(next.count(failure("a.bin", chunk: 3), productID: "p1").error == nil)
    }
}
