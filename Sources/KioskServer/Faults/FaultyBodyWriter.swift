import Hummingbird
import Logging
import NIOCore

/// Writes a response body through the byte-stream faults of one response: it paces the bytes (`throttle`), sends
/// them a few at a time (`trickle`), pauses (`stall`), sends the content bytes of another version (`changed`),
/// flips a byte (`corrupt`) and closes the connection part way (`cut`), logging and counting each fault as it
/// happens. (`gzip-range` compresses what it writes on the way out: ``RangeResponder`` wraps the response's writer
/// in a ``GzipBodyWriter``.)
struct FaultyBodyWriter {
    /// Thrown when the connection is cut on purpose, so the response ends there.
    struct InjectedCut: Error {}

    private var faults: BodyFaults
    private let metrics: ServerMetrics
    private let logger: Logger
    private let channel: (any Channel)?
    /// Body bytes written so far.
    private var offset: Int64 = 0
    /// Where the current throttled stretch started, and the bytes sent since.
    private var paceStart = ContinuousClock.now
    private var pacedBytes: Int64 = 0
    private var isThrottleRecorded = false
    /// Bytes sent since the last pause of `trickle`.
    private var trickledBytes: Int64 = 0

    /// A writer applying `faults`; `channel` is the connection to close for a cut.
    init(faults: BodyFaults, metrics: ServerMetrics, logger: Logger, channel: (any Channel)?) {
        self.faults = faults
        self.metrics = metrics
        self.logger = logger
        self.channel = channel
    }

    /// Writes the next body bytes; `isContent` says whether they are file bytes (counted as content sent) or
    /// multipart framing. Each write runs under `timer`; the pauses of `stall` and `throttle` wait outside it (a
    /// stall is bounded by ``FaultSpec/maximumDelay``).
    mutating func write(
        _ buffer: ByteBuffer, to writer: inout any ResponseBodyWriter, isContent: Bool, timer: SendTimeout
    ) async throws {
        var remaining = buffer
        while remaining.readableBytes > 0 {
            if let stall = faults.stall, stall.offset == offset {
                faults.stall = nil
                record(.stall, ["offset": "\(offset)", "duration": "\(FaultSpec.format(stall.duration))"])
                try await Task.sleep(for: stall.duration)
                paceStart = .now
                pacedBytes = 0
            }
            if let cutAt = faults.cutAt, cutAt == offset {
                record(.cut, ["offset": "\(offset)"])
                await closeConnection()
                throw InjectedCut()
            }
            var length = Int64(remaining.readableBytes)
            for boundary in [faults.stall?.offset, faults.cutAt] {
                if let boundary, boundary > offset { length = min(length, boundary - offset) }
            }
            if let rate = faults.bytesPerSecond {
                if !isThrottleRecorded {
                    isThrottleRecorded = true
                    record(.throttle, ["bytes_per_second": "\(rate)"])
                }
                length = min(length, Self.pacedSliceLength(rate: rate))
            }
            if let trickle = faults.trickle {
                if offset == 0 && trickledBytes == 0 {
                    record(.trickle, ["bytes": "\(trickle.bytes)", "pause": "\(FaultSpec.format(trickle.pause))"])
                }
                length = min(length, trickle.bytes - trickledBytes)
            }
            var slice = remaining.readSlice(length: Int(length))!
            if faults.changesBytes, isContent { ChangedVersion.transform(&slice) }
            if let corruptAt = faults.corruptAt, corruptAt >= offset, corruptAt < offset + length {
                faults.corruptAt = nil
                let index = slice.readerIndex + Int(corruptAt - offset)
                slice.setInteger(~slice.getInteger(at: index, as: UInt8.self)!, at: index)
                record(.corrupt, ["offset": "\(corruptAt)"])
            }
            try await timer.run { try await writer.write(slice) }
            offset += length
            if isContent { metrics.countContentBytes(Int(length)) }
            if let closeAfter = faults.closeAfter, closeAfter == offset {
                // The body is out, and its Content-Length lied: nothing after it may be read as another answer.
                record(.lengthLie, ["sent": "\(offset)"])
                await closeConnection()
                throw InjectedCut()
            }
            if let trickle = faults.trickle {
                trickledBytes += length
                if trickledBytes == trickle.bytes {
                    trickledBytes = 0
                    try await Task.sleep(for: trickle.pause)
                }
            }
            if let rate = faults.bytesPerSecond {
                pacedBytes += length
                try await Task.sleep(until: paceStart + .seconds(Double(pacedBytes) / Double(rate)), clock: .continuous)
            }
        }
    }

    /// The most bytes a throttled response writes at once: a tenth of a second's worth, and never more than 64 KiB,
    /// so that the bytes leave as a slow link delivers them (steadily, not in bursts) and a client that stops
    /// reading has at most one small slice in flight.
    static func pacedSliceLength(rate: Int64) -> Int64 {
        min(64 << 10, max(1, rate / 10))
    }

    private func record(_ kind: FaultKind, _ metadata: Logger.Metadata) {
        FaultInjector.record(kind, metadata: metadata, metrics: metrics, logger: logger)
    }

    /// Lets the bytes written so far reach the socket, then closes the connection: the client sees a short body.
    private func closeConnection() async {
        guard let channel else { return }
        try? await FileRegionSink(channel: channel).flush()
        try? await channel.close()
    }
}
