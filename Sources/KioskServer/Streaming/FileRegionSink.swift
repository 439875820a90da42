import NIOCore
import NIOHTTP1

/// Sends file ranges to a connection with `sendfile(2)`: the kernel copies from the page cache to the socket, with no
/// copy through user space and no buffer held per download.
///
/// Hummingbird's response writer carries `ByteBuffer`s only, so the sink writes `FileRegion`s from a pass-through
/// handler placed just above NIO's `HTTPResponseEncoder`, below Hummingbird's HTTP codec. Ordering with the parts
/// Hummingbird writes holds because both go through the connection's event loop in order: a part written with the
/// response body writer has reached the event loop when its `write` returns, and the sink schedules its region
/// after that.
struct FileRegionSink: Sendable {
    private let channel: any Channel

    /// A sink for `channel`, or nil when the connection has no HTTP/1 encoder to write below (HTTP/2, a test
    /// harness): the caller then streams through the response body writer.
    init?(channel: (any Channel)?) async {
        guard let channel else { return nil }
        let hasEncoder = try? await channel.eventLoop.submit {
            (try? channel.pipeline.syncOperations.handler(type: HTTPResponseEncoder.self)) != nil
        }.get()
        guard hasEncoder == true else { return nil }
        self.channel = channel
    }

    /// Writes `region` as the next body bytes and returns when the kernel has taken all of it.
    func send(_ region: FileRegion) async throws {
        try await write(.fileRegion(region))
    }

    /// Returns when the kernel has taken every body byte written before (an empty write, completed in order).
    func flush() async throws {
        try await write(.byteBuffer(ByteBuffer()))
    }

    private func write(_ data: IOData) async throws {
        let channel = self.channel
        let promise = channel.eventLoop.makePromise(of: Void.self)
        channel.eventLoop.execute {
            do {
                let operations = channel.pipeline.syncOperations
                let context: ChannelHandlerContext
                if let existing = try? operations.context(handlerType: FileRegionWriter.self) {
                    context = existing
                } else {
                    let encoder = try operations.handler(type: HTTPResponseEncoder.self)
                    try operations.addHandler(FileRegionWriter(), position: .after(encoder))
                    context = try operations.context(handlerType: FileRegionWriter.self)
                }
                context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(data)), promise: promise)
            } catch {
                promise.fail(error)
            }
        }
        try await promise.futureResult.get()
    }

    /// The pass-through handler whose context is where file regions enter the pipeline.
    private final class FileRegionWriter: ChannelOutboundHandler, RemovableChannelHandler {
        typealias OutboundIn = HTTPServerResponsePart
        typealias OutboundOut = HTTPServerResponsePart
    }
}
