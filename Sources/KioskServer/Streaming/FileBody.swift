import Hummingbird
import KioskCore
import NIOCore
import NIOPosix
import _NIOFileSystem

/// Streams parts of a file as a response body.
///
/// On an HTTP/1 connection the file ranges go out with `sendfile(2)` through ``FileRegionSink`` (no copy through
/// user space, no buffer per download); elsewhere they are read from disk in chunks, each written before the next
/// is read (the writer's back-pressure). Either way a download never holds a file in memory. A body with injected
/// byte-stream faults always goes through the chunked path, each chunk through a ``FaultyBodyWriter``.
struct FileBody {
    /// A piece of the body: literal bytes or a range of the file (the multipart planner's vocabulary).
    typealias Segment = MultipartByteRangesPlan.Segment

    /// The largest file region handed to `sendfile` at once, so that a client that stops reading is noticed
    /// within ``sendTimeout``.
    static let regionSize: Int64 = 4 << 20

    /// Why streaming stopped before the first byte: the file on disk is not the one the headers describe.
    struct FileChangedError: Error {}

    let file: ManifestFile
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
            if faults == nil, let sink = await FileRegionSink(channel: channel) {
                try await sendRegions(segments, sink: sink, writer: &writer)
            } else {
                try await streamChunks(segments, writer: &writer, faults: &faults)
            }
            try await writer.finish(nil)
        }
    }

    /// The headers were built from the manifest: refuse to send a file that has since changed under the same name
    /// (the client's If-Range then gets the new version from the next request).
    private func checkUnchanged(_ identity: FileIdentity?) throws {
        guard identity == file.identity else { throw FileChangedError() }
    }

    private func sendRegions(
        _ segments: [Segment], sink: FileRegionSink, writer: inout any ResponseBodyWriter
    ) async throws {
        try await NonBlockingFileIO(threadPool: .singleton).withFileRegion(_deprecatedPath: file.absolutePath) {
            whole in
            try checkUnchanged(whole.fileHandle.withUnsafeFileDescriptor { FileIdentity(descriptor: $0) })
            for segment in segments {
                switch segment {
                case .bytes(let bytes):
                    try await timer.run { try await writer.write(ByteBuffer(bytes: bytes)) }
                case .file(let range):
                    var start = range.first
                    while start <= range.last {
                        let end = min(range.last + 1, start + Self.regionSize)
                        try await timer.run {
                            try await sink.send(
                                FileRegion(fileHandle: whole.fileHandle, readerIndex: Int(start), endIndex: Int(end)))
                        }
                        metrics.countContentBytes(Int(end - start))
                        start = end
                    }
                }
            }
        }
    }

    private func streamChunks(
        _ segments: [Segment], writer: inout any ResponseBodyWriter, faults: inout FaultyBodyWriter?
    ) async throws {
        try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(file.absolutePath)) { handle in
            try checkUnchanged(try await handle.info().platformSpecificStatus.map(FileIdentity.init))
            for segment in segments {
                switch segment {
                case .bytes(let bytes):
                    if faults != nil {
                        try await faults!.write(ByteBuffer(bytes: bytes), to: &writer, isContent: false, timer: timer)
                    } else {
                        try await timer.run { try await writer.write(ByteBuffer(bytes: bytes)) }
                    }
                case .file(let range):
                    let chunks = handle.readChunks(
                        in: range.first..<(range.last + 1), chunkLength: .bytes(Int64(chunkSize)))
                    for try await chunk in chunks {
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
    }

    /// The bound on each write.
    private var timer: SendTimeout { SendTimeout(channel: channel, timeout: sendTimeout, metrics: metrics) }
}
