import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1.1 channel with a ``DirectAnswerHandler`` placed right after its HTTP/1.1 decoder, so that
/// the requests ``DirectAnswers`` can answer are answered on the event loop and every other request reaches the
/// application as before. The direct answer handler keeps the idle timeout (Hummingbird's own is left off: it
/// would not see the direct answers).
struct KioskHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let http1: HTTP1Channel
    let answers: DirectAnswers
    let idleTimeout: Duration

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        http1.setup(channel: channel, logger: logger).flatMapThrowing { value in
            // A request head rarely needs more than 1 KiB (nginx's client_header_buffer_size): each connection keeps
            // one receive buffer, 2 KiB by NIO's default, which the allocator grows for larger reads.
            try channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: Self.receiveBuffers)
            let operations = channel.pipeline.syncOperations
            let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try operations.addHandler(
                DirectAnswerHandler(answers: answers, idleTimeout: idleTimeout), position: .after(decoder))
            return value
        }
    }

    /// The receive buffers: 1 KiB to start with, between 64 bytes and 64 KiB as reads go.
    static let receiveBuffers = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 1024, maximum: 65536)

    func handle(value: Value, logger: Logger) async {
        await http1.handle(value: value, logger: logger)
    }
}
