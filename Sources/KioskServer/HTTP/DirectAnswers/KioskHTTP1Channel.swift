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
            let decoder = try replaceRequestDecoder(of: operations)
            let applicationNeeded = channel.eventLoop.makePromise(of: Void.self)
            try operations.addHandler(
                DirectAnswerHandler(answers: answers, idleTimeout: idleTimeout, applicationNeeded: applicationNeeded),
                position: .after(decoder))
            return Value(http1: value, applicationNeeded: applicationNeeded)
        }
    }

    /// Puts a request decoder of its own in place of the one Hummingbird's pipeline set up, with the same limits, and
    /// returns it.
    ///
    /// SwiftNIO (from 2.101.3) pairs the request decoder of `configureHTTPServerPipeline` with the response encoder:
    /// the decoder queues each request's method, and the encoder takes one from the queue for each response head it
    /// encodes, to leave the body out of an answer to `HEAD`. A direct answer is written past the encoder, so its
    /// request's method would stay queued, and every later answer on the connection would be framed for the request
    /// before it: a routed answer to `HEAD` after a direct `GET` would carry its body, a routed answer to `GET` after
    /// a direct `HEAD` would announce a body it never sends (the client waits for it). An unpaired decoder frames
    /// every answer from the response alone, as before that version: the routes' answers to `HEAD` carry no body
    /// themselves (``ErrorMiddleware`` drops an error's).
    private func replaceRequestDecoder(
        of operations: ChannelPipeline.SynchronousOperations
    ) throws -> ByteToMessageHandler<HTTPRequestDecoder> {
        let paired = try operations.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self)
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = http1.configuration.httpDecoder.maxHeaderFieldSize
        limits.maxHeaderListSize = http1.configuration.httpDecoder.maxHeaderListSize
        limits.maxHeaderFieldCount = http1.configuration.httpDecoder.maxHeaderFieldCount
        let decoder = ByteToMessageHandler(
            HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes, limitConfiguration: limits))
        try operations.addHandler(decoder, position: .after(paired.handler))
        // Nothing has been read yet: the paired decoder holds no bytes, and leaves at once.
        operations.removeHandler(context: paired, promise: nil)
        return decoder
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
