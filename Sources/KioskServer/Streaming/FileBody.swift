import Hummingbird
import KioskCore
import NIOCore
import _NIOFileSystem

/// Streams parts of a file as a response body: read from disk in chunks, each written to the socket before the
/// next is read (the writer's back-pressure), so a download never holds more than one chunk in memory.
struct FileBody {
    /// A piece of the body: literal bytes or a range of the file (the multipart planner's vocabulary).
    typealias Segment = MultipartByteRangesPlan.Segment

    /// Why streaming stopped before the first byte: the file on disk is not the one the headers describe.
    struct FileChangedError: Error {}

    let file: ManifestFile
    let chunkSize: Int
    let metrics: ServerMetrics

    /// A body of `contentLength` bytes made of `segments`.
    func body(segments: [Segment], contentLength: Int64) -> ResponseBody {
        ResponseBody(contentLength: Int(contentLength)) { writer in
            metrics.activeStreams.increment()
            defer { metrics.activeStreams.decrement() }
            try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(file.absolutePath)) { handle in
                // The headers were built from the manifest: refuse to send a file that has since changed under the
                // same name (the client's If-Range will then get the new version from the next request).
                let info = try await handle.info()
                let modified =
                    Int64(info.lastDataModificationTime.seconds) * 1_000_000_000
                    + Int64(info.lastDataModificationTime.nanoseconds)
                guard info.size == file.length, modified == file.modifiedNanoseconds else { throw FileChangedError() }
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
            try await writer.finish(nil)
        }
    }
}
