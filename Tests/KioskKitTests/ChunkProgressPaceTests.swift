import Testing

@testable import KioskKit

/// The pace of a connection's progress checkpoints: every 256 KiB on a link of 10 MiB/s or slower, at most every
/// 20 ms on a faster one.
@Suite("Chunk progress pace")
struct ChunkProgressPaceTests {
    @Test func admitsAReportOnceTheMinimumIntervalHasPassed() {
        var pace = ChunkProgressPace()
        let start = ContinuousClock.now
        let admitted = [0, 5, 19, 20, 39, 45, 65].filter { pace.admits(at: start.advanced(by: .milliseconds($0))) }
        #expect(admitted == [0, 20, 45, 65])
    }

    /// At 10 MiB/s a connection receives 256 KiB in 25 ms: every report of the granularity is journaled, which is
    /// what the stop cost of `StopCostTests` (4 connections at 10 MiB/s) relies on.
    @Test func aTenMebibytesPerSecondLinkJournalsEveryGranule() {
        let granule = Duration.seconds(Double(ChunkPrefix.granularity) / Double(10 << 20))
        #expect(granule > ChunkPrefix.minimumInterval)
        var pace = ChunkProgressPace()
        let start = ContinuousClock.now
        let admitted = (0..<100).filter { pace.admits(at: start.advanced(by: granule * $0)) }
        #expect(admitted.count == 100)
    }
}
