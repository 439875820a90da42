import HTTPTypes
import Hummingbird
import NIOCore

/// Passes a response body on gzipped, as one gzip member (``GzipStream``): each write compressed as it comes, the
/// member ended when the body finishes. A body cut part way ends as a truncated member.
struct GzipBodyWriter: ResponseBodyWriter {
    /// The response's own writer.
    var base: any ResponseBodyWriter
    private var stream = GzipStream()

    /// A writer gzipping into `base`.
    init(base: any ResponseBodyWriter) {
        self.base = base
    }

    /// `body` gzipped: sent chunked, since its compressed length is known only at the end.
    static func encoding(_ body: ResponseBody) -> ResponseBody {
        ResponseBody { writer in try await body.write(GzipBodyWriter(base: writer)) }
    }

    mutating func write(_ buffer: ByteBuffer) async throws {
        let compressed = try stream.deflate(buffer)
        if compressed.readableBytes > 0 { try await base.write(compressed) }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await base.write(stream.finish())
        try await base.finish(trailingHeaders)
    }
}
