import Hummingbird
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Answers the requests ``DirectAnswers`` can answer on the connection's event loop, as bytes made once per answer,
/// and passes every other request on to the application, carrying out the decisions of a
/// ``DirectAnswerStateMachine``; it also keeps the connection's idle timeout, for both kinds of request, and the send
/// timeout of the bodies it sends, both on one timer per connection (``ConnectionTimer``).
///
/// It sits right after the HTTP/1.1 decoder, before the conversion to HTTP Types and everything after it: a direct
/// answer costs parsing, a lookup and one write of the answer's encoded head with the two headers made per answer
/// (`X-Request-ID`, `Date`) and its body (in the same buffer when small), which bypass the response encoder. A
/// content answer's body follows its head as file regions of at most ``FileBody/regionSize`` (`sendfile(2)`), each
/// under the send timeout; meanwhile the connection reads nothing more, and a shutdown waits for the body before
/// closing the connection. The application's answers pass through it on their way to the encoder, which is how it
/// knows when the application has answered. The application's handlers hear only of what concerns them: a read's
/// completion when a request part went on to them, and the channel's writability outside the event loop's bodies.
final class DirectAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let answers: DirectAnswers
    private let idleTimeout: TimeAmount
    /// How long one region of a body may take to go out (``DirectAnswers/sendTimeout``).
    private let sendTimeout: TimeAmount
    private var machine = DirectAnswerStateMachine()
    /// The answer to the held head, and when that head arrived.
    private var held: (answer: DirectAnswer, route: DirectAnswers.Route, started: ContinuousClock.Instant)?
    /// The response encoder's context: direct answers are written from it, as bytes it has no part in.
    private var encoder: ChannelHandlerContext?
    /// When something last happened on the connection.
    private var lastActivity = NIODeadline.now()
    /// The connection's one timer, for the idle timeout and the send timeout, re-armed lazily: a request, an answer
    /// or a region sent never schedules or cancels one (cancelling costs a search of the event loop's tasks, which
    /// a launch-day spike's thousands of connections make long).
    private var timer = ConnectionTimer()
    /// The numbers of the request IDs this connection generates.
    private var requestIDNumbers = DirectRequestID.Numbers()
    /// The request metrics' series of the last direct answer, kept for the next (``DirectAnswers/record``).
    private var recordedSeries: DirectAnswers.RecordedSeries?
    /// The content answer whose body is being sent.
    private var stream: FileStream?
    /// The socket's cork, on while a content answer's head and first region are written.
    private var cork = TCPCork()
    /// The request parts read while a body was being sent, read again once it is out.
    /// (An array: empty, it allocates nothing, and most connections never queue anything.)
    private var queued: [HTTPServerRequestPart] = []
    /// Whether the channel asked to read while a body was being sent (the read waits for it).
    private var readPending = false
    /// Whether the server is shutting down: a connection sending a body closes once it is out.
    private var quiescing = false
    /// The `Date` header's value and the second it is for (read from the shared cache once a second).
    private var date = (second: -1, text: "")
    /// Whether a request part went on to the application since the last read completed: only then do the
    /// application's handlers hear of the read's completion.
    private var forwardedSinceReadComplete = false
    /// Whether the application's side was last told that the channel is writable. While the event loop sends a
    /// body (which makes the channel unwritable and writable again, every time), the application writes nothing:
    /// it learns the state once the body is out.
    private var applicationSeesWritable = true
    /// The application's side of the connection, started at the first request part passed on or a request that
    /// does not parse (``KioskHTTP1Channel``).
    private var application: ApplicationSide
    /// Whether the client closed its side while a body was being sent: the closure is acted on once the body and
    /// the requests read before it are answered.
    private var inputClosedWhileStreaming = false

    /// A content answer's body on its way out, one file region after another.
    private struct FileStream {
        /// The open file's descriptor, duplicated for this answer (a handle is written by one write at a time).
        let handle: NIOFileHandle
        /// The next byte to send, and the end of the body (exclusive).
        var next: Int64
        let end: Int64
        /// When the region being written must be out (the send timeout); nil between writes.
        var deadline: NIODeadline?
    }

    /// A handler giving `answers`, closing connections idle for `idleTimeout`, and starting `application` when a
    /// request needs it.
    init(answers: DirectAnswers, idleTimeout: Duration, application: ApplicationSide) {
        self.answers = answers
        self.idleTimeout = TimeAmount(idleTimeout)
        self.sendTimeout = TimeAmount(answers.sendTimeout)
        self.application = application
    }

    func handlerAdded(context: ChannelHandlerContext) {
        encoder = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
        if context.channel.isActive && !timer.isArmed {
            armTimer(at: lastActivity + idleTimeout, context: context)
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        lastActivity = .now()
        if !timer.isArmed { armTimer(at: lastActivity + idleTimeout, context: context) }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastActivity = .now()
        process(unwrapInboundIn(data), context: context)
    }

    /// Carries out what the machine decides for one request part.
    private func process(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        let action: DirectAnswerStateMachine.Action
        switch part {
        case .head(let head):
            let started = ContinuousClock.now
            let direct = machine.mayAnswerDirectly && encoder != nil ? answers.answer(to: head) : nil
            action = machine.receivedHead(head, answer: direct.map { $0.answer.streams ? .streamed : .whole })
            if case .hold = action, let direct { held = (direct.answer, direct.route, started) }
        case .body:
            action = machine.receivedBody()
        case .end:
            action = machine.receivedEnd()
        }
        switch action {
        case .hold, .discard:
            break
        case .queue:
            queued.append(part)
        case .forward:
            guard startApplication(context: context) else { return }
            forwardedSinceReadComplete = true
            context.fireChannelRead(wrapInboundOut(part))
        case .forwardHeldHead(let head):
            held = nil
            guard startApplication(context: context) else { return }
            forwardedSinceReadComplete = true
            context.fireChannelRead(wrapInboundOut(.head(head)))
            context.fireChannelRead(wrapInboundOut(part))
        case .answer(let head, let thenClose):
            guard let held, let encoder else { return }
            self.held = nil
            answer(head, with: held.answer, thenClose: thenClose, through: encoder, context: context)
            lastActivity = .now()
            answers.record(
                method: head.method, route: held.route, status: held.answer.statusCode,
                duration: ContinuousClock.now - held.started, last: &recordedSeries)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard forwardedSinceReadComplete else { return }
        forwardedSinceReadComplete = false
        context.fireChannelReadComplete()
    }

    /// Starts the application's side unless it runs already, and tells it whether the channel is writable; false
    /// (the connection closed) when it cannot start.
    private func startApplication(context: ChannelHandlerContext) -> Bool {
        guard !application.isStarted else { return true }
        guard application.start(on: context.channel) else {
            context.close(promise: nil)
            return false
        }
        // Its writer starts out writable.
        applicationSeesWritable = true
        if !machine.isStreaming { tellApplicationWritability(context: context) }
        return true
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if !machine.isStreaming { tellApplicationWritability(context: context) }
    }

    /// Passes the channel's writability on when it differs from what the application's side was last told.
    private func tellApplicationWritability(context: ChannelHandlerContext) {
        guard application.isStarted else { return }
        let writable = context.channel.isWritable
        guard writable != applicationSeesWritable else { return }
        applicationSeesWritable = writable
        context.fireChannelWritabilityChanged()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            machine.applicationFinishedAnswer()
            lastActivity = .now()
        }
        context.write(data, promise: promise)
    }

    func read(context: ChannelHandlerContext) {
        // While a body is being sent nothing more is read: the next requests wait in the socket, not in memory.
        if machine.isStreaming {
            readPending = true
        } else {
            context.read()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            quiescing = true
            // Hummingbird closes a connection with no request of its own in progress at once: one sending a body
            // closes when the body is out instead (``finishStream(failed:context:)``).
            if machine.isStreaming { return }
            // Without the application's side, nothing of the application is in progress either.
            if !application.isStarted { return context.close(promise: nil) }
        }
        if case ChannelEvent.inputClosed = event {
            // The client closed its side: it waits for the answers to what it sent.
            guard !machine.isStreaming else {
                inputClosedWhileStreaming = true
                return
            }
            return inputClosed(context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// The client closed its side and every answer is written: once they are out (an empty write completes after
    /// them; closing the output of a connection whose input is closed closes it, and drops what is still queued),
    /// the application's side ends the connection when it runs, otherwise the output closes.
    private func inputClosed(context: ChannelHandlerContext) {
        let flushed = context.eventLoop.makePromise(of: Void.self)
        if let encoder {
            encoder.writeAndFlush(NIOAny(IOData.byteBuffer(ByteBuffer())), promise: flushed)
        } else {
            flushed.succeed()
        }
        flushed.futureResult.assumeIsolated().whenComplete { [self] _ in
            if application.isStarted {
                context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
            } else {
                context.close(mode: .output, promise: nil)
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A request that does not parse is answered (400) and the connection closed by the application's side.
        guard startApplication(context: context) else { return }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer.cancel()
        application.connectionEnded()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer.cancel()
        application.connectionEnded()
    }

    /// Sends `answer` to `request`: its head, then its body, past the response encoder.
    private func answer(
        _ request: HTTPRequestHead, with answer: DirectAnswer, thenClose: Bool, through encoder: ChannelHandlerContext,
        context: ChannelHandlerContext
    ) {
        let id = DirectRequestID(of: request, numbers: &requestIDNumbers)
        if case .file(let file) = answer { answers.content?.log(file, requestID: id) }
        // One buffer for the head and the headers made per answer, and a small body too: one write, not three.
        let encodedHead = answer.encodedHead
        let smallBody = answer.bufferedBody.flatMap { $0.readableBytes <= Self.smallBody ? $0 : nil }
        var head = encoder.channel.allocator.buffer(
            capacity: encodedHead.readableBytes + Self.perAnswerHeadersSize + (smallBody?.readableBytes ?? 0))
        head.writeImmutableBuffer(encodedHead)
        writePerAnswerHeaders(id: id, into: &head)
        guard case .file(let file) = answer, let body = file.body else {
            var rest = answer.bufferedBody
            if var smallBody {
                head.writeBuffer(&smallBody)
                rest = nil
            }
            // A promise only when something waits for the write: most answers need none.
            let written = thenClose ? context.eventLoop.makePromise(of: Void.self) : nil
            writeAndFlush(head, then: rest, to: encoder, promise: written)
            if let written { closeOutput(after: written.futureResult, context: context) }
            return
        }
        // The head and the body's first region leave together: corked until the first region's write.
        cork.set(true, on: context.channel)
        defer { cork.set(false, on: context.channel) }
        encoder.write(NIOAny(IOData.byteBuffer(head)), promise: nil)
        answers.metrics.activeStreams.increment()
        do {
            stream = FileStream(handle: try file.file.duplicateHandle(), next: body.first, end: body.last + 1)
            sendNextRegion(through: encoder, context: context)
        } catch {
            // No descriptor left to send it with: the head is out, so the connection must go.
            finishStream(failed: true, context: context)
        }
    }

    /// A body up to this size is copied into the head's buffer (a catalog page, `/healthz`); a larger one is
    /// written as the buffer it is (the whole catalog).
    static let smallBody = 4096
    /// Room for ``writePerAnswerHeaders(id:into:)``'s lines (a longest client request ID takes 64 bytes).
    static let perAnswerHeadersSize = 128

    /// Writes `X-Request-ID`, `Date` and the blank line that ends the head.
    private func writePerAnswerHeaders(id: DirectRequestID, into lines: inout ByteBuffer) {
        lines.writeStaticString("X-Request-ID: ")
        id.write(into: &lines)
        lines.writeStaticString("\r\nDate: ")
        let second = Int(time(nil))
        if second != date.second { date = (second, HTTPDateCache.shared.text(at: second)) }
        lines.writeString(date.text)
        lines.writeStaticString("\r\n\r\n")
    }

    private func writeAndFlush(
        _ head: ByteBuffer, then body: ByteBuffer?, to encoder: ChannelHandlerContext, promise: EventLoopPromise<Void>?
    ) {
        guard let body else { return encoder.writeAndFlush(NIOAny(IOData.byteBuffer(head)), promise: promise) }
        encoder.write(NIOAny(IOData.byteBuffer(head)), promise: nil)
        encoder.writeAndFlush(NIOAny(IOData.byteBuffer(body)), promise: promise)
    }

    /// As the application does after a `Connection: close` request: the output is closed once the answer is out,
    /// the input when the client closes its side.
    private func closeOutput(after written: EventLoopFuture<Void>, context: ChannelHandlerContext) {
        let loopBoundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.whenComplete { _ in loopBoundContext.value.close(mode: .output, promise: nil) }
    }

    /// Sends the stream's next file region (at most ``FileBody/regionSize``, so that a client that stops reading is
    /// noticed within the send timeout), then the next, until the body is out.
    private func sendNextRegion(through encoder: ChannelHandlerContext, context: ChannelHandlerContext) {
        guard var stream else { return }
        let end = min(stream.end, stream.next + FileBody.regionSize)
        let region = FileRegion(fileHandle: stream.handle, readerIndex: Int(stream.next), endIndex: Int(end))
        let count = Int(end - stream.next)
        stream.next = end
        let deadline = NIODeadline.now() + sendTimeout
        stream.deadline = deadline
        self.stream = stream
        // The timer fires by the region's deadline: with a send timeout at least the idle timeout it always does.
        if timer.deadline.map({ $0 > deadline }) ?? true {
            timer.cancel()
            armTimer(at: deadline, context: context)
        }
        let written = context.eventLoop.makePromise(of: Void.self)
        encoder.writeAndFlush(NIOAny(IOData.fileRegion(region)), promise: written)
        written.futureResult.assumeIsolated().whenComplete { [self] result in
            self.stream?.deadline = nil
            switch result {
            case .success:
                answers.metrics.countContentBytes(count)
                if end < stream.end {
                    sendNextRegion(through: encoder, context: context)
                } else {
                    finishStream(failed: false, context: context)
                }
            case .failure:
                finishStream(failed: true, context: context)
            }
        }
    }

    /// The body is out, or could not be sent (the connection then closes): the requests read meanwhile are read
    /// again, and so is the socket.
    private func finishStream(failed: Bool, context: ChannelHandlerContext) {
        if let stream { try? stream.handle.close() }
        stream = nil
        answers.metrics.activeStreams.decrement()
        lastActivity = .now()
        if failed || quiescing {
            // A body cut short, or the server shutting down with this answer out: the connection goes.
            queued.removeAll()
            context.close(promise: nil)
            return
        }
        switch machine.streamFinished() {
        case .closeOutput:
            queued.removeAll()
            context.close(mode: .output, promise: nil)
        case .readQueued:
            // The application hears the channel's state before any request read meanwhile reaches it (the body is
            // out, so the channel is writable again: this only makes sure the application's writer knows it).
            tellApplicationWritability(context: context)
            let parts = queued
            queued = []
            for (index, part) in parts.enumerated() {
                // A part answered with another body: the rest wait for that one.
                guard !machine.isStreaming else {
                    queued = Array(parts[index...])
                    break
                }
                process(part, context: context)
            }
            if !parts.isEmpty { channelReadComplete(context: context) }
            if inputClosedWhileStreaming && !machine.isStreaming {
                inputClosedWhileStreaming = false
                inputClosed(context: context)
                return
            }
        }
        // Read on (after a `Connection: close` too: the client's close of its side ends the connection).
        if !machine.isStreaming && readPending {
            readPending = false
            context.read()
        }
    }

    private func armTimer(at deadline: NIODeadline, context: ChannelHandlerContext) {
        timer.arm(at: deadline, context: context) { [self] context in timerFired(context: context) }
    }

    /// The two timeouts. The send timeout: a region of a body not out by its deadline (the client stopped reading)
    /// closes the connection, which fails the write and ends the stream. The idle timeout, as Hummingbird keeps it:
    /// a connection with no request in progress and nothing read or answered for `idleTimeout` is closed. Otherwise
    /// the timer re-arms for the earliest deadline still ahead.
    private func timerFired(context: ChannelHandlerContext) {
        timer.fired()
        let now = NIODeadline.now()
        let sendDeadline = stream?.deadline
        if let sendDeadline, sendDeadline <= now {
            answers.metrics.recordConnectionTimeout(reason: "send")
            return context.close(promise: nil)
        }
        let idleDeadline = lastActivity + idleTimeout
        if machine.isIdle && idleDeadline <= now {
            return context.close(promise: nil)
        }
        // Busy (a request in progress keeps its connection): look again a timeout later, or by the send deadline.
        let next = machine.isIdle ? idleDeadline : now + idleTimeout
        armTimer(at: min(next, sendDeadline ?? next), context: context)
    }
}
