import NIOCore
import NIOHTTP1

/// Writes body bytes straight to a connection's HTTP/1 encoder, so that file ranges go out with `sendfile(2)`: the
/// kernel copies from the page cache to the socket, with no copy through user space and no buffer held per
/// download.
///
/// Hummingbird's response writer carries `ByteBuffer`s only, so the sink writes `FileRegion`s from a pass-through
/// handler placed just above NIO's `HTTPResponseEncoder`, below Hummingbird's HTTP codec. Ordering with the parts
/// Hummingbird writes holds because both go through the connection's event loop in order: a part written with the
/// response body writer has reached the event loop when its `write` returns, and the sink schedules its writes
/// after that.
///
/// Each write is one task on the event loop, which finds the encoder, starts the write's ``SendTimeout`` and
/// writes: one thread hop per write, none to ask first whether the connection has an encoder.
struct FileRegionSink: Sendable {
    /// Thrown by a write when the connection has no HTTP/1 encoder to write below (HTTP/2, a test harness);
    /// nothing was written, and the caller streams through the response body writer instead.
    struct Unavailable: Error {}

    let channel: any Channel

    /// Writes `data` as the next body bytes and returns when the kernel has taken all of it, closing the
    /// connection when that takes longer than `timeout` allows.
    func send(_ data: IOData, within timeout: SendTimeout? = nil) async throws {
        let channel = self.channel
        let promise = channel.eventLoop.makePromise(of: Void.self)
        channel.eventLoop.execute {
            do {
                let context = try Self.writerContext(in: channel.pipeline.syncOperations)
                if let timer = timeout?.start() {
                    promise.futureResult.whenComplete { _ in timer.cancel() }
                }
                context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(data)), promise: promise)
            } catch {
                promise.fail(error)
            }
        }
        try await promise.futureResult.get()
    }

    /// Returns when the kernel has taken every body byte written before (an empty write, completed in order).
    func flush() async throws {
        try await send(.byteBuffer(ByteBuffer()))
    }

    /// The context of the pass-through handler above the encoder, added on first use.
    private static func writerContext(
        in operations: ChannelPipeline.SynchronousOperations
    ) throws -> ChannelHandlerContext {
        if let existing = try? operations.context(handlerType: FileRegionWriter.self) { return existing }
        guard let encoder = try? operations.handler(type: HTTPResponseEncoder.self) else { throw Unavailable() }
        try operations.addHandler(FileRegionWriter(), position: .after(encoder))
        return try operations.context(handlerType: FileRegionWriter.self)
    }

    /// The pass-through handler whose context is where file regions enter the pipeline.
    private final class FileRegionWriter: ChannelOutboundHandler, RemovableChannelHandler {
        typealias OutboundIn = HTTPServerResponsePart
        typealias OutboundOut = HTTPServerResponsePart
    }
}
