import NIOCore
import NIOHTTPTypes

/// Closes a connection whose client takes longer than a deadline to send one whole request, from its head to the
/// end of its body.
///
/// Hummingbird's idle timeout restarts with every body chunk, so a client dripping a body one byte at a time, or
/// sending on after the server already refused the body (413), would otherwise hold its connection for as long as
/// it likes. Placed after the HTTP decoding, before the request is handled.
///
/// One timer per connection, not one per request: it is armed when a request starts and no timer is pending, and
/// when it fires it closes the connection if the request being read started more than the timeout ago, re-arms for
/// that request's deadline if it started later, and does nothing between requests.
final class RequestReadTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let timeout: TimeAmount
    private let onTimeout: @Sendable () -> Void
    /// When the request being read started; nil between requests.
    private var requestStarted: NIODeadline?
    private var timer = ConnectionTimer()

    /// A handler allowing `timeout` per request; `onTimeout` is called when it closes a connection.
    init(timeout: Duration, onTimeout: @escaping @Sendable () -> Void) {
        self.timeout = TimeAmount(timeout)
        self.onTimeout = onTimeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            let now = NIODeadline.now()
            requestStarted = now
            if !timer.isArmed { arm(at: now + timeout, context: context) }
        case .end:
            requestStarted = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    private func arm(at deadline: NIODeadline, context: ChannelHandlerContext) {
        timer.arm(at: deadline, context: context) { [self] context in timerFired(context: context) }
    }

    private func timerFired(context: ChannelHandlerContext) {
        timer.fired()
        guard let started = requestStarted else { return }
        let deadline = started + timeout
        if deadline <= .now() {
            onTimeout()
            context.close(promise: nil)
        } else {
            arm(at: deadline, context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer.cancel()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer.cancel()
    }
}
