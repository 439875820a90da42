import NIOCore

/// One timer of a connection's channel handler, armed when needed and re-armed only when it fires (a request or a
/// read never schedules or cancels one): ``DirectAnswerHandler``'s idle and send timeouts and
/// ``RequestReadTimeoutHandler``'s read deadline. Loop-bound: used only on the channel's event loop.
struct ConnectionTimer {
    private var scheduled: Scheduled<Void>?
    /// When the armed timer fires; nil when it is not armed.
    private(set) var deadline: NIODeadline?

    /// Whether the timer is armed.
    var isArmed: Bool { scheduled != nil }

    /// Arms the timer for `deadline`; `fire` runs then on the channel's event loop and calls ``fired()`` first.
    mutating func arm(
        at deadline: NIODeadline, context: ChannelHandlerContext, fire: @escaping (ChannelHandlerContext) -> Void
    ) {
        let loopBoundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        let loopBoundFire = NIOLoopBound(fire, eventLoop: context.eventLoop)
        self.deadline = deadline
        scheduled = context.eventLoop.scheduleTask(deadline: deadline) {
            loopBoundFire.value(loopBoundContext.value)
        }
    }

    /// Marks the timer fired (called first thing by `fire`).
    mutating func fired() {
        scheduled = nil
        deadline = nil
    }

    /// Cancels the timer (the connection closed or the handler left the pipeline).
    mutating func cancel() {
        scheduled?.cancel()
        scheduled = nil
        deadline = nil
    }
}
