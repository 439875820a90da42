import NIOCore
import NIOHTTPTypes

/// Closes a connection whose client takes longer than a deadline to send one whole request, from its head to the
/// end of its body.
///
/// Hummingbird's idle timeout restarts with every body chunk, so a client dripping a body one byte at a time, or
/// sending on after the server already refused the body (413), would otherwise hold its connection for as long as
/// it likes. Placed after the HTTP decoding, before the request is handled.
final class RequestReadTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let timeout: TimeAmount
    private let onTimeout: @Sendable () -> Void
    private var deadline: Scheduled<Void>?

    /// A handler allowing `timeout` per request; `onTimeout` is called when it closes a connection.
    init(timeout: Duration, onTimeout: @escaping @Sendable () -> Void) {
        self.timeout = TimeAmount(timeout)
        self.onTimeout = onTimeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            deadline?.cancel()
            let loopBoundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
            let onTimeout = self.onTimeout
            deadline = context.eventLoop.scheduleTask(in: timeout) {
                onTimeout()
                loopBoundContext.value.close(promise: nil)
            }
        case .end:
            deadline?.cancel()
            deadline = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }
}
