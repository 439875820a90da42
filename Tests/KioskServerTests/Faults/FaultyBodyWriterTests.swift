import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization
import Testing

@testable import KioskServer

@Suite("Fault body writer")
struct FaultyBodyWriterTests {
    /// Records each write the faulty writer makes.
    struct RecordingWriter: ResponseBodyWriter {
        let writes: RecordedWrites

        mutating func write(_ buffer: ByteBuffer) async throws { writes.append(buffer.readableBytes) }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    final class RecordedWrites: Sendable {
        private let recorded = Mutex<[Int]>([])
        var lengths: [Int] { recorded.withLock { $0 } }
        func append(_ length: Int) { recorded.withLock { $0.append(length) } }
    }

    /// A throttled body leaves in slices of a tenth of a second's worth, at most 64 KiB: a slow link delivers
    /// steadily, and a client that stops reading has at most one small slice in flight.
    @Test func aThrottledBodyLeavesInSmallSlices() async throws {
        #expect(FaultyBodyWriter.pacedSliceLength(rate: 100 << 10) == 10 << 10)
        #expect(FaultyBodyWriter.pacedSliceLength(rate: 10 << 20) == 64 << 10)
        #expect(FaultyBodyWriter.pacedSliceLength(rate: 5) == 1)

        let metrics = ServerMetrics()
        var faults = FaultyBodyWriter(
            faults: BodyFaults(bytesPerSecond: 256 << 20), metrics: metrics, logger: Logger(label: "test"),
            channel: nil)
        let writes = RecordedWrites()
        var writer: any ResponseBodyWriter = RecordingWriter(writes: writes)
        let timer = SendTimeout(channel: nil, timeout: .seconds(1), metrics: metrics)
        try await faults.write(ByteBuffer(repeating: 7, count: 300 << 10), to: &writer, isContent: true, timer: timer)
        #expect(writes.lengths == [64 << 10, 64 << 10, 64 << 10, 64 << 10, 44 << 10])
    }
}
