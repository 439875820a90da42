import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1.1 channel with a ``DirectAnswerHandler`` placed right after its HTTP/1.1 decoder, so that
/// the requests ``DirectAnswers`` can answer are answered on the event loop and every other request reaches the
/// application as before. The direct answer handler keeps the idle timeout (Hummingbird's own is left off: it
/// would not see the direct answers).
///
/// The application's side of a connection (Hummingbird's connection task, whose async stack is most of what an
/// open connection costs) starts only when the connection first needs it: at the first request passed on, an error
/// (a request that does not parse gets its 400 there), a user event (a client's half-closure), or when the connection
/// closes. A connection that only ever gets direct answers waits for that with a shallow stack.
struct KioskHTTP1Channel: ServerChildChannel {
    /// Hummingbird's async channel, and the signal that the application's side of the connection must start.
    struct Value: ServerChildChannelValue {
        let http1: HTTP1Channel.Value
        /// Succeeded by ``DirectAnswerHandler`` when the application's side must start.
        let applicationNeeded: EventLoopPromise<Void>

        var channel: any Channel { http1.channel }
    }

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
            let applicationNeeded = channel.eventLoop.makePromise(of: Void.self)
            try operations.addHandler(
                DirectAnswerHandler(answers: answers, idleTimeout: idleTimeout, applicationNeeded: applicationNeeded),
                position: .after(decoder))
            return Value(http1: value, applicationNeeded: applicationNeeded)
        }
    }

    /// The receive buffers: 1 KiB to start with, between 64 bytes and 64 KiB as reads go.
    static let receiveBuffers = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 1024, maximum: 65536)

    func handle(value: Value, logger: Logger) async {
        // Cancelled while waiting (the server stopping without a graceful shutdown): Hummingbird's connection task
        // starts at once and handles the cancellation as it always does.
        await withTaskCancellationHandler {
            try? await value.applicationNeeded.futureResult.get()
        } onCancel: {
            value.applicationNeeded.succeed()
        }
        await http1.handle(value: value.http1, logger: logger)
    }
}
