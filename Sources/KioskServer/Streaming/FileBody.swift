import Hummingbird
import KioskCore
import NIOCore
import NIOPosix
import _NIOFileSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Streams parts of a file as a response body.
///
/// On an HTTP/1 connection the file ranges go out with `sendfile(2)` through ``FileRegionSink`` (no copy through
/// user space, no buffer per download); elsewhere they are read from disk in chunks, each written before the next
/// is read (the writer's back-pressure). Either way a download never holds a file in memory.
struct FileBody {
    /// A piece of the body: literal bytes or a range of the file (the multipart planner's vocabulary).
    typealias Segment = MultipartByteRangesPlan.Segment

    /// Why streaming stopped before the first byte: the file on disk is not the one the headers describe.
    struct FileChangedError: Error {}

    let file: ManifestFile
    let chunkSize: Int
    let metrics: ServerMetrics
    /// The connection, for sendfile; nil streams through the body writer.
    let channel: (any Channel)?

    /// A body of `contentLength` bytes made of `segments`.
    func body(segments: [Segment], contentLength: Int64) -> ResponseBody {
        ResponseBody(contentLength: Int(contentLength)) { writer in
            metrics.activeStreams.increment()
            defer { metrics.activeStreams.decrement() }
            if let sink = await FileRegionSink(channel: channel) {
                try await sendRegions(segments, sink: sink, writer: &writer)
            } else {
                try await streamChunks(segments, writer: &writer)
            }
            try await writer.finish(nil)
        }
    }

    /// The headers were built from the manifest: refuse to send a file that has since changed under the same name
    /// (the client's If-Range then gets the new version from the next request).
    private func checkUnchanged(size: Int64, modifiedNanoseconds: Int64) throws {
        guard size == file.length, modifiedNanoseconds == file.modifiedNanoseconds else { throw FileChangedError() }
    }

    private func sendRegions(
        _ segments: [Segment], sink: FileRegionSink, writer: inout any ResponseBodyWriter
    ) async throws {
        try await NonBlockingFileIO(threadPool: .singleton).withFileRegion(_deprecatedPath: file.absolutePath) {
            whole in
            var status = CStat()
            let result = try whole.fileHandle.withUnsafeFileDescriptor { fstat($0, &status) }
            guard result == 0 else { throw FileChangedError() }
            try checkUnchanged(
                size: Int64(status.st_size), modifiedNanoseconds: CatalogLoader.modificationNanoseconds(status))
            for segment in segments {
                switch segment {
                case .bytes(let bytes):
                    try await writer.write(ByteBuffer(bytes: bytes))
                case .file(let range):
                    try await sink.send(
                        FileRegion(fileHandle: whole.fileHandle, readerIndex: Int(range.first), endIndex: Int(range.last) + 1))
                    metrics.countContentBytes(Int(range.length))
                }
            }
        }
    }

    private func streamChunks(_ segments: [Segment], writer: inout any ResponseBodyWriter) async throws {
        try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(file.absolutePath)) { handle in
            let info = try await handle.info()
            try checkUnchanged(
                size: info.size,
                modifiedNanoseconds: Int64(info.lastDataModificationTime.seconds) * 1_000_000_000
                    + Int64(info.lastDataModificationTime.nanoseconds))
            for segment in segments {
                switch segment {
                case .bytes(let bytes):
                    try await writer.write(ByteBuffer(bytes: bytes))
                case .file(let range):
                    let chunks = handle.readChunks(
                        in: range.first..<(range.last + 1), chunkLength: .bytes(Int64(chunkSize)))
                    for try await chunk in chunks {
                        let count = chunk.readableBytes
                        try await writer.write(chunk)
                        metrics.countContentBytes(count)
                    }
                }
            }
        }
    }
}
