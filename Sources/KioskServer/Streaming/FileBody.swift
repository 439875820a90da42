import Hummingbird
import KioskCore
import NIOCore
import NIOPosix

/// Streams parts of an open file as a response body.
///
/// On an HTTP/1 connection the body goes out through ``FileRegionSink``: file ranges with `sendfile(2)` (no copy
/// through user space, no buffer per download). Elsewhere the ranges are read from disk in chunks, each written
/// before the next is read (the writer's back-pressure). Either way a download never holds a file in memory. A body
/// with injected byte-stream faults always goes through the chunked path, each chunk through a
/// ``FaultyBodyWriter``.
struct FileBody: RangedBody {
    /// A piece of the body: literal bytes or a range of the file (the multipart planner's vocabulary).
    typealias Segment = MultipartByteRangesPlan.Segment

    /// The largest file region handed to `sendfile` at once, so that a client that stops reading is noticed
    /// within ``sendTimeout``.
    static let regionSize: Int64 = 4 << 20

    /// The file, opened when the request was admitted (the version the headers describe).
    let file: OpenContentFile
    let chunkSize: Int
    /// How long one piece (a chunk, or a file region of at most ``regionSize``) may take to go out before the
    /// client counts as gone and the connection is closed (see ``SendTimeout``).
    let sendTimeout: Duration
    let metrics: ServerMetrics
    /// The connection, for sendfile; nil streams through the body writer.
    let channel: (any Channel)?

    /// A body of `contentLength` bytes made of `segments`, written through `faults` when given.
    func body(segments: [Segment], contentLength: Int64, faults: FaultyBodyWriter? = nil) -> ResponseBody {
        ResponseBody(contentLength: Int(contentLength)) { writer in
            metrics.activeStreams.increment()
            defer { metrics.activeStreams.decrement() }
            var faults = faults
            try await write(segments, to: &writer, faults: &faults)
            try await writer.finish(nil)
        }
    }

    /// Writes `segments` of the file into a body being sent, without finishing it, through `faults` when given (a
    /// pack sends pieces of several files in one body, through one writer of faults).
    func write(_ segments: [Segment], to writer: inout any ResponseBodyWriter, faults: inout FaultyBodyWriter?)
        async throws
    {
        let handle = try file.duplicateHandle()
        defer { try? handle.close() }
        if faults == nil, let channel {
            do {
                return try await sendThroughSink(segments, handle: handle, sink: FileRegionSink(channel: channel))
            } catch is FileRegionSink.Unavailable {
                // No HTTP/1 encoder, and nothing written yet: stream through the writer.
            }
        }
        try await streamChunks(segments, handle: handle, writer: &writer, faults: &faults)
    }

    private func sendThroughSink(_ segments: [Segment], handle: NIOFileHandle, sink: FileRegionSink) async throws {
        for segment in segments {
            switch segment {
            case .bytes(let bytes):
                try await sink.send(.byteBuffer(ByteBuffer(bytes: bytes)), within: timer)
            case .file(let range):
                var start = range.first
                while start <= range.last {
                    let end = min(range.last + 1, start + Self.regionSize)
                    let region = FileRegion(fileHandle: handle, readerIndex: Int(start), endIndex: Int(end))
                    try await sink.send(.fileRegion(region), within: timer)
                    metrics.countContentBytes(Int(end - start))
                    start = end
                }
            }
        }
    }

    private func streamChunks(
        _ segments: [Segment], handle: NIOFileHandle, writer: inout any ResponseBodyWriter,
        faults: inout FaultyBodyWriter?
    ) async throws {
        let fileIO = NonBlockingFileIO(threadPool: .singleton)
        for segment in segments {
            switch segment {
            case .bytes(let bytes):
                if faults != nil {
                    try await faults!.write(ByteBuffer(bytes: bytes), to: &writer, isContent: false, timer: timer)
                } else {
                    try await timer.run { try await writer.write(ByteBuffer(bytes: bytes)) }
                }
            case .file(let range):
                var start = range.first
                while start <= range.last {
                    let chunk = try await fileIO.read(
                        fileHandle: handle, fromOffset: start,
                        byteCount: Int(min(Int64(chunkSize), range.last + 1 - start)),
                        allocator: ByteBufferAllocator())
                    guard chunk.readableBytes > 0 else { throw FileShortened() }
                    start += Int64(chunk.readableBytes)
                    if faults != nil {
                        try await faults!.write(chunk, to: &writer, isContent: true, timer: timer)
                    } else {
                        let count = chunk.readableBytes
                        try await timer.run { try await writer.write(chunk) }
                        metrics.countContentBytes(count)
                    }
                }
            }
        }
    }

    /// Thrown when the file ends before a range the headers promised (it was truncated in place while served):
    /// the response stops short and the connection closes.
    struct FileShortened: Error {}

    /// The bound on each write.
    private var timer: SendTimeout { SendTimeout(channel: channel, timeout: sendTimeout, metrics: metrics) }
}
