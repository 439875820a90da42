import Testing

@testable import KioskServer

/// The report's verdict on a run whose scenario changes the file for good (`new-bytes-or-error`): a clear error or
/// the new version's exact bytes pass; anything else (the old version, a mix of both) fails, and says why.
@Suite("Bench: the verdict when the file changed")
struct BenchReportTests {
    private static let key = BenchSequence.Key(run: "r", scenario: "bytes-changed", file: "big.bin")
    private static let file = (size: Int64(204_800), sha256: String(repeating: "a", count: 64))
    private static let changedSHA256 = String(repeating: "c", count: 64)

    /// A run cut at half, resumed with a range of the new version, that ended as `outcome` says.
    private static func entry(_ outcome: BenchClientOutcome?) -> BenchReport.Entry {
        var sequence = BenchSequence()
        sequence.requestCount = 2
        sequence.records = [
            BenchRequestRecord(
                number: 1, method: "GET", range: nil, ifRange: nil, ifMatch: nil, faults: "cut=50%", status: 200,
                bytesSent: 102_400, errorPage: false),
            BenchRequestRecord(
                number: 2, method: "GET", range: "bytes=102400-", ifRange: "\"\(file.sha256)\"", ifMatch: nil,
                faults: "changed", status: 206, bytesSent: 102_400, errorPage: false),
        ]
        sequence.clientOutcome = outcome
        return BenchReport.entry(key, sequence, expected: .changedOrError, file: file, changedSHA256: changedSHA256)
    }

    @Test func aClearErrorPasses() {
        let entry = Self.entry(.failed(message: "the file changed during the download"))
        #expect(entry.verdict == .pass && entry.reasons.isEmpty)
        #expect(entry.expected == "new-bytes-or-error" && entry.changedSHA256 == Self.changedSHA256)
        #expect(entry.clientError == "the file changed during the download")
    }

    @Test func theNewVersionWholePasses() {
        let entry = Self.entry(.saved(sha256: Self.changedSHA256))
        #expect(entry.verdict == .pass && entry.reasons.isEmpty && entry.savedSHA256 == Self.changedSHA256)
        #expect(entry.fileSHA256 == Self.file.sha256 && entry.changedSHA256 == Self.changedSHA256)
    }

    @Test func aMixOfTheTwoVersionsFails() throws {
        let mixed = String(repeating: "b", count: 64)
        let entry = Self.entry(.saved(sha256: mixed))
        #expect(entry.verdict == .fail && entry.savedSHA256 == mixed && !entry.errorPageAccepted)
        let reason = try #require(entry.reasons.first)
        #expect(reason.contains("neither the new version's") && reason.contains(Self.changedSHA256))
    }

    @Test func theOldVersionFailsToo() throws {
        let entry = Self.entry(.saved(sha256: Self.file.sha256))
        #expect(entry.verdict == .fail)
        #expect(try #require(entry.reasons.first).contains("from before the change"))
    }

    @Test func aClientThatHasNotSaidIsUnknownAndOtherOutcomesCarryNoChangedDigest() {
        #expect(Self.entry(nil).verdict == .unknown)
        let bytes = BenchReport.entry(
            Self.key, BenchSequence(), expected: .bytes, file: Self.file, changedSHA256: Self.changedSHA256)
        #expect(bytes.changedSHA256 == nil)
    }

    @Test func withTheFileGoneNoBytesCanPass() throws {
        var sequence = BenchSequence()
        sequence.clientOutcome = .saved(sha256: Self.changedSHA256)
        let entry = BenchReport.entry(Self.key, sequence, expected: .changedOrError, file: nil, changedSHA256: nil)
        #expect(entry.verdict == .fail && entry.changedSHA256 == nil)
        #expect(try #require(entry.reasons.first).contains("gone"))
    }
}
