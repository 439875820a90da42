import NIOHTTP1

/// Which requests of one connection ``DirectAnswerHandler`` answers and which go on to the application, in the
/// order HTTP/1.1 requires (answers leave in the order their requests came).
///
/// A request is answered directly only when the application owes no answer on the connection, and only once its
/// end has arrived without a body; otherwise it goes on whole, and so does every request behind it until the
/// application has finished its answers. While a direct answer's body is being sent, the parts read meanwhile wait
/// (the handler stops reading) and are read again once it is out. After a request that says `Connection: close`,
/// nothing more is read, as the application does.
struct DirectAnswerStateMachine {
    /// What the handler does with a request part it read.
    enum Action: Equatable {
        /// Nothing yet: the head is held until the request's end.
        case hold
        /// Pass the part on to the application.
        case forward
        /// Pass the held head on, then the part: the request turned out to have a body.
        case forwardHeldHead(HTTPRequestHead)
        /// Write the answer to this held head (its request ended), then close the connection's output if asked.
        case answer(HTTPRequestHead, thenClose: Bool)
        /// Drop the part: it follows a request that closed the connection.
        case discard
        /// Keep the part until the direct answer being sent is out (``streamFinished()``), then read it again.
        case queue
    }

    /// How a direct answer goes out.
    enum AnswerKind: Equatable {
        /// Written at once (the head and a body made before).
        case whole
        /// Its body is sent piece by piece after the head; the connection's next requests wait for it.
        case streamed
    }

    /// What to do once a streamed answer is out.
    enum StreamEnd: Equatable {
        /// Read the parts that were queued meanwhile, and read on.
        case readQueued
        /// Close the connection's output: the request said `Connection: close`.
        case closeOutput
    }

    private enum State {
        /// Between requests.
        case idle
        /// A head that will be answered directly once its end arrives.
        case holding(HTTPRequestHead, AnswerKind)
        /// A request the application answers: its parts go on; `last` when it closes the connection.
        case forwarding(last: Bool)
        /// A direct answer's body is being sent; `thenClose` when its request closes the connection.
        case streaming(thenClose: Bool)
        /// A request closed the connection: nothing more is read.
        case closing
    }

    private var state = State.idle
    /// Requests passed on whose answers the application has not finished.
    private(set) var answersOwedByApplication = 0

    /// Whether a request arriving now may be answered directly: the application owes no answer.
    var mayAnswerDirectly: Bool { isIdle }

    /// Whether a direct answer's body is being sent.
    var isStreaming: Bool {
        if case .streaming = state { return true }
        return false
    }

    /// A request's head arrived; `answer` says how its direct answer goes out, nil without one (asked only when it
    /// may be answered directly).
    mutating func receivedHead(_ head: HTTPRequestHead, answer: AnswerKind?) -> Action {
        switch state {
        case .closing, .streaming(thenClose: true):
            return .discard
        case .streaming(thenClose: false):
            return .queue
        case .idle, .holding, .forwarding:
            if mayAnswerDirectly, let answer {
                state = .holding(head, answer)
                return .hold
            }
            answersOwedByApplication += 1
            state = .forwarding(last: Self.closesConnection(head))
            return .forward
        }
    }

    /// A part of a request's body arrived.
    mutating func receivedBody() -> Action {
        switch state {
        case .holding(let head, _):
            answersOwedByApplication += 1
            state = .forwarding(last: Self.closesConnection(head))
            return .forwardHeldHead(head)
        case .forwarding, .idle:
            return .forward
        case .streaming(let thenClose):
            return thenClose ? .discard : .queue
        case .closing:
            return .discard
        }
    }

    /// A request's end arrived.
    mutating func receivedEnd() -> Action {
        switch state {
        case .holding(let head, let kind):
            let close = Self.closesConnection(head)
            switch kind {
            case .whole: state = close ? .closing : .idle
            case .streamed: state = .streaming(thenClose: close)
            }
            return .answer(head, thenClose: close)
        case .forwarding(let last):
            state = last ? .closing : .idle
            return .forward
        case .idle:
            return .forward
        case .streaming(let thenClose):
            return thenClose ? .discard : .queue
        case .closing:
            return .discard
        }
    }

    /// The streamed answer is out (its body was sent whole; a failed one closes the connection instead).
    mutating func streamFinished() -> StreamEnd {
        guard case .streaming(let thenClose) = state else { return .readQueued }
        state = thenClose ? .closing : .idle
        return thenClose ? .closeOutput : .readQueued
    }

    /// The application wrote the end of an answer.
    mutating func applicationFinishedAnswer() {
        answersOwedByApplication = max(0, answersOwedByApplication - 1)
    }

    /// Whether nothing is going on: no request being read or held, no answer owed by the application (what the
    /// idle timeout waits for).
    var isIdle: Bool {
        if case .idle = state { return answersOwedByApplication == 0 }
        return false
    }

    /// Whether a request asks to close its connection after its answer (the application's own test: its
    /// `Connection` header is exactly `close`).
    static func closesConnection(_ head: HTTPRequestHead) -> Bool {
        head.headers.joinedValue(of: "Connection") == "close"
    }
}

extension HTTPHeaders {
    /// The values of every line named `name`, joined with ", " as HTTP Types joins them; nil without one.
    func joinedValue(of name: String) -> String? {
        let values = self[name]
        switch values.count {
        case 0: return nil
        case 1: return values[0]
        default: return values.joined(separator: ", ")
        }
    }
}
