import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTPTypes

/// Answers the requests ``DirectAnswers`` can answer on the connection's event loop and passes every other one on
/// to the application, carrying out the decisions of a ``DirectAnswerStateMachine``.
///
/// It sits after Hummingbird's connection state handler (which keeps the idle timeout and `Connection: close`
/// for the answers written here too) and before the application's channel.
final class DirectAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let answers: DirectAnswers
    private var machine = DirectAnswerStateMachine()
    /// The answer to the held head, and when that head arrived.
    private var held: (answer: ReadyAnswer, route: DirectAnswers.Route, started: ContinuousClock.Instant)?

    init(answers: DirectAnswers) {
        self.answers = answers
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let action: DirectAnswerStateMachine.Action
        switch unwrapInboundIn(data) {
        case .head(let head):
            let started = ContinuousClock.now
            let direct = machine.mayAnswerDirectly ? answers.answer(to: head) : nil
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
            guard let held else { return }
            self.held = nil
            let written = write(held.answer, to: head, route: held.route, started: held.started, context: context)
            if thenClose {
                // As the application does: the output is closed once the answer is out, the input when the client
                // closes its side.
                let loopBoundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
                written.whenComplete { _ in loopBoundContext.value.close(mode: .output, promise: nil) }
            }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { machine.applicationFinishedAnswer() }
        context.write(data, promise: promise)
    }

    /// Writes `answer` to `request`; the future completes when it is written.
    private func write(
        _ answer: ReadyAnswer, to request: HTTPRequest, route: DirectAnswers.Route, started: ContinuousClock.Instant,
        context: ChannelHandlerContext
    ) -> EventLoopFuture<Void> {
        var headers = answer.headers
        if let body = answer.body { headers[.contentLength] = String(body.readableBytes) }
        headers[RequestIDs.headerName] = RequestIDs.id(of: request.headerFields) { RequestID().description }
        headers[.date] = HTTPDateCache.shared.current
        context.write(wrapOutboundOut(.head(HTTPResponse(status: answer.status, headerFields: headers))), promise: nil)
        if let body = answer.body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        answers.metrics.recordRequest(
            method: request.method.rawValue, route: route.rawValue, status: answer.status.code,
            duration: ContinuousClock.now - started)
        return written
    }
}
