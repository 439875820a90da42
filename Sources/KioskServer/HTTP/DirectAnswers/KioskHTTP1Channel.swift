import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// Hummingbird's HTTP/1.1 channel with a ``DirectAnswerHandler`` placed right after its HTTP/1.1 decoder, so that
/// the requests ``DirectAnswers`` can answer are answered on the event loop and every other request reaches the
/// application as before. The direct answer handler keeps the idle timeout (Hummingbird's own is left off: it
/// would not see the direct answers).
///
/// A connection starts with the response encoder, the request decoder and the direct answer handler only. The
/// application's side (``ApplicationSide``: Hummingbird's handlers, its async channel, and the work of its
/// connection task, whose async stack is most of what an open connection costs) starts when the connection first
/// needs it: at the first request passed on, or a request that does not parse (it gets its 400 there). A connection
/// that only ever gets direct answers ends without it, and its connection task only waits for that end.
///
/// The pipeline is set up here rather than by Hummingbird's `HTTP1Channel.setup`, with the same handlers and
/// limits, for two reasons: the application's handlers come later, and the request decoder must not be paired with
/// the response encoder. SwiftNIO (from 2.101.3) pairs them in `configureHTTPServerPipeline`: the decoder queues
/// each request's method, and the encoder takes one from the queue for each response head it encodes, to leave the
/// body out of an answer to `HEAD`. A direct answer is written past the encoder, so its request's method would stay
/// queued, and every later answer on the connection would be framed for the request before it: a routed answer to
/// `HEAD` after a direct `GET` would carry its body, a routed answer to `GET` after a direct `HEAD` would announce a
/// body it never sends (the client waits for it). An unpaired decoder frames every answer from the response alone:
/// the routes' answers to `HEAD` carry no body themselves (``ErrorMiddleware`` drops an error's).
struct KioskHTTP1Channel: ServerChildChannel {
    /// The connection, and its application's side once started.
    struct Value: ServerChildChannelValue {
        let channel: any Channel
        /// Hummingbird's async channel when the application's side starts; nil when the connection ends without it.
        let application: EventLoopFuture<HTTP1Channel.Value?>
    }

    /// The application's responder and the HTTP/1.1 configuration (decoder limits, additional handlers).
    let http1: HTTP1Channel
    let answers: DirectAnswers
    let idleTimeout: Duration

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // A request head rarely needs more than 1 KiB (nginx's client_header_buffer_size): each connection keeps
            // one receive buffer, 2 KiB by NIO's default, which the allocator grows for larger reads.
            try channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: Self.receiveBuffers)
            let started = channel.eventLoop.makePromise(of: HTTP1Channel.Value?.self)
            let application = ApplicationSide(
                install: { [http1] channel in try Self.installApplication(of: http1, on: channel, logger: logger) },
                started: started)
            try channel.pipeline.syncOperations.addHandlers([
                HTTPResponseEncoder(configuration: .init()),
                ByteToMessageHandler(
                    HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes, limitConfiguration: decoderLimits)),
                DirectAnswerHandler(answers: answers, idleTimeout: idleTimeout, application: application),
            ])
            return Value(channel: channel, application: started.futureResult)
        }
    }

    /// The request decoder's limits, as configured for Hummingbird's channel.
    private var decoderLimits: NIOHTTPDecoderLimitConfiguration {
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = http1.configuration.httpDecoder.maxHeaderFieldSize
        limits.maxHeaderListSize = http1.configuration.httpDecoder.maxHeaderListSize
        limits.maxHeaderFieldCount = http1.configuration.httpDecoder.maxHeaderFieldCount
        return limits
    }

    /// What `HTTP1Channel.setup` adds after its decoder and encoder, added at the end of the pipeline, and the async
    /// channel Hummingbird's connection task uses.
    private static func installApplication(of http1: HTTP1Channel, on channel: any Channel, logger: Logger) throws
        -> HTTP1Channel.Value
    {
        let operations = channel.pipeline.syncOperations
        try operations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
        try operations.addHandlers(http1.configuration.additionalChannelHandlers())
        try operations.addHandler(
            HTTPConnectionStateHandler(idleTimeout: http1.configuration.idleTimeout.map { .init($0) }, logger: logger))
        return try NIOAsyncChannel(
            wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
    }

    /// The receive buffers: 1 KiB to start with, between 64 bytes and 64 KiB as reads go.
    static let receiveBuffers = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 1024, maximum: 65536)

    func handle(value: Value, logger: Logger) async {
        // Cancelled while waiting (the server stopping without a graceful shutdown): the connection closes, which
        // ends the wait.
        let application = await withTaskCancellationHandler {
            try? await value.application.get()
        } onCancel: {
            value.channel.close(promise: nil)
        }
        guard let application = application ?? nil else { return }
        await http1.handle(value: application, logger: logger)
    }
}
