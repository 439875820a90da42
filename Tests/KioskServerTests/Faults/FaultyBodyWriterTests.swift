import CompressNIO
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

    /// Keeps every byte written, and whether the body was finished.
    struct CollectingWriter: ResponseBodyWriter {
        let collected: CollectedBytes

        mutating func write(_ buffer: ByteBuffer) async throws { collected.append(buffer) }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws { collected.finish() }
    }

    final class CollectedBytes: Sendable {
        private let state = Mutex<(bytes: [UInt8], isFinished: Bool)>(([], false))
        var bytes: [UInt8] { state.withLock { $0.bytes } }
        var isFinished: Bool { state.withLock { $0.isFinished } }
        func append(_ buffer: ByteBuffer) { state.withLock { $0.bytes += buffer.readableBytesView } }
        func finish() { state.withLock { $0.isFinished = true } }
    }

    /// `changed`: every content byte is the changed version's (XOR 0x5A, the same at every offset), the bytes
    /// between the parts of a multipart answer are left alone.
    @Test func aChangedBodySendsTheOtherVersionsBytes() async throws {
        let metrics = ServerMetrics()
        var faults = FaultyBodyWriter(
            faults: BodyFaults(changesBytes: true), metrics: metrics, logger: Logger(label: "test"), channel: nil)
        let collected = CollectedBytes()
        var writer: any ResponseBodyWriter = CollectingWriter(collected: collected)
        let timer = SendTimeout(channel: nil, timeout: .seconds(1), metrics: metrics)
        let content: [UInt8] = [0x00, 0x5A, 0xFF, 0x41]
        try await faults.write(ByteBuffer(string: "--b\r\n"), to: &writer, isContent: false, timer: timer)
        try await faults.write(ByteBuffer(bytes: content), to: &writer, isContent: true, timer: timer)
        #expect(collected.bytes == Array("--b\r\n".utf8) + [0x5A, 0x00, 0xA5, 0x1B])
        #expect(content.map { $0 ^ ChangedVersion.mask } == [0x5A, 0x00, 0xA5, 0x1B])
    }

    /// `gzip-range`: what is written goes out as one gzip member, piece by piece, ended when the body finishes; an
    /// empty body is an empty member.
    @Test func aGzippedBodyGunzipsToWhatWasWritten() async throws {
        let pieces = [
            ByteBuffer(bytes: (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }),
            ByteBuffer(), ByteBuffer(string: "and a little more"), ByteBuffer(repeating: 0, count: 300_000),
        ]
        for body in [pieces, []] {
            let collected = CollectedBytes()
            var writer = GzipBodyWriter(base: CollectingWriter(collected: collected))
            for piece in body { try await writer.write(piece) }
            try await writer.finish(nil)
            #expect(collected.isFinished)
            let gzip = ByteBuffer(bytes: collected.bytes)
            #expect(Array(gzip.readableBytesView.prefix(2)) == [0x1F, 0x8B])
            let expected = body.flatMap { Array($0.readableBytesView) }
            #expect(collected.bytes.count < max(expected.count, 64))
            var compressed = gzip
            #expect(Array(try compressed.decompress(with: .gzip()).readableBytesView) == expected)
        }
    }
}
