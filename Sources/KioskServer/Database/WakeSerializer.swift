/// Runs a follower's `wake` for one source of wake-ups after another, never two at once: a wake asked while one
/// runs is folded into a single run after it (the run reads everything new anyway).
actor WakeSerializer {
    private let wake: @Sendable () async -> Void
    private var running = false
    private var pending = false

    /// Serializes the calls of `wake`.
    init(_ wake: @escaping @Sendable () async -> Void) { self.wake = wake }

    /// Runs `wake` now, or once more after the run in progress.
    func request() async {
        if running {
            pending = true
            return
        }
        running = true
        repeat {
            pending = false
            await wake()
        } while pending
        running = false
    }
}
