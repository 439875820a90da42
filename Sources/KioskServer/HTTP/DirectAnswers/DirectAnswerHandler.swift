import Hummingbird
import NIOCore
import NIOHTTP1

/// Answers the requests ``DirectAnswers`` can answer on the connection's event loop, as bytes made once per answer,
/// and passes every other request on to the application, carrying out the decisions of a
/// ``DirectAnswerStateMachine``; it also keeps the connection's idle timeout, for both kinds of request.
///
/// It sits right after the HTTP/1.1 decoder, before the conversion to HTTP Types and everything after it: a direct
/// answer costs parsing, a lookup and one `writev` of the answer's encoded head, the two headers made per answer
/// (`X-Request-ID`, `Date`) and its body, which bypass the response encoder. The application's answers pass
/// through it on their way to the encoder, which is how it knows when the application has answered.
final class DirectAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let answers: DirectAnswers
    private let idleTimeout: TimeAmount
    private var machine = DirectAnswerStateMachine()
    /// The answer to the held head, and when that head arrived.
    private var held: (answer: ReadyAnswer, route: DirectAnswers.Route, started: ContinuousClock.Instant)?
    /// The response encoder's context: direct answers are written from it, as bytes it has no part in.
    private var encoder: ChannelHandlerContext?
    /// When something last happened on the connection, and the idle timer (one per connection, re-armed lazily).
    private var lastActivity = NIODeadline.now()
    private var idleTimer = ConnectionTimer()

    /// A handler giving `answers`, closing connections idle for `idleTimeout`.
    init(answers: DirectAnswers, idleTimeout: Duration) {
        self.answers = answers
        self.idleTimeout = TimeAmount(idleTimeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        encoder = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
        if context.channel.isActive && !idleTimer.isArmed {
            armIdleTimer(at: lastActivity + idleTimeout, context: context)
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        lastActivity = .now()
        if !idleTimer.isArmed { armIdleTimer(at: lastActivity + idleTimeout, context: context) }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastActivity = .now()
        let action: DirectAnswerStateMachine.Action
        switch unwrapInboundIn(data) {
        case .head(let head):
            let started = ContinuousClock.now
            let direct = machine.mayAnswerDirectly && encoder != nil ? answers.answer(to: head) : nil
            action = machine.receivedHead(head, answerable: direct != nil)
            if case .hold = action, let direct { held = (direct.answer, direct.route, started) }
        case .body:
            action = machine.receivedBody()
        case .end:
            action = machine.receivedEnd()
        }
        switch action {
        case .hold, .discard:
            break
        case .forward:
            context.fireChannelRead(data)
        case .forwardHeldHead(let head):
            held = nil
            context.fireChannelRead(wrapInboundOut(.head(head)))
            context.fireChannelRead(data)
        case .answer(let head, let thenClose):
            guard let held, let encoder else { return }
            self.held = nil
            let written = write(held.answer, to: head, through: encoder)
            lastActivity = .now()
            answers.metrics.recordRequest(
                method: head.method.rawValue, route: held.route.rawValue, status: held.answer.status.code,
                duration: ContinuousClock.now - held.started)
            if thenClose {
                // As the application does: the output is closed once the answer is out, the input when the client
                // closes its side.
                let loopBoundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
                written.whenComplete { _ in loopBoundContext.value.close(mode: .output, promise: nil) }
            }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            machine.applicationFinishedAnswer()
            lastActivity = .now()
        }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleTimer.cancel()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleTimer.cancel()
    }

    /// Writes `answer` to `request` as bytes, past the response encoder; the future completes once it is written.
    private func write(_ answer: ReadyAnswer, to request: HTTPRequestHead, through encoder: ChannelHandlerContext)
        -> EventLoopFuture<Void>
    {
        let id = request.headers.joinedValue(of: "X-Request-ID").flatMap(RequestIDs.sanitized)
        var perAnswer = encoder.channel.allocator.buffer(capacity: 96)
        perAnswer.writeStaticString("X-Request-ID: ")
        perAnswer.writeString(id ?? RequestID().description)
        perAnswer.writeStaticString("\r\nDate: ")
        perAnswer.writeString(HTTPDateCache.shared.current)
        perAnswer.writeStaticString("\r\n\r\n")
        encoder.write(NIOAny(IOData.byteBuffer(answer.encodedHead)), promise: nil)
        guard let body = answer.body else {
            return encoder.writeAndFlush(NIOAny(IOData.byteBuffer(perAnswer)))
        }
        encoder.write(NIOAny(IOData.byteBuffer(perAnswer)), promise: nil)
        return encoder.writeAndFlush(NIOAny(IOData.byteBuffer(body)))
    }

    /// The idle timeout, as Hummingbird keeps it: a connection with no request in progress and nothing read or
    /// answered for `idleTimeout` is closed. The timer re-arms for the last activity's deadline when it fires early.
    private func armIdleTimer(at deadline: NIODeadline, context: ChannelHandlerContext) {
        idleTimer.arm(at: deadline, context: context) { [self] context in idleTimerFired(context: context) }
    }

    private func idleTimerFired(context: ChannelHandlerContext) {
        idleTimer.fired()
        let now = NIODeadline.now()
        let deadline = lastActivity + idleTimeout
        if machine.isIdle && deadline <= now {
            context.close(promise: nil)
        } else {
            // Busy (a request in progress keeps its connection): look again a timeout later.
            armIdleTimer(at: machine.isIdle ? deadline : now + idleTimeout, context: context)
        }
    }
}
