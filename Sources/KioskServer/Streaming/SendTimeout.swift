import NIOCore

/// Bounds each write of a response body: a write that has not completed within ``timeout`` (the client stopped
/// reading) closes the connection, so the pending write fails and the stream ends. Every body write runs under it,
/// with or without injected faults; a deliberate pause (`stall`, `throttle`) waits outside it.
struct SendTimeout {
    /// The connection to close; nil (no channel, as in tests of the body alone) applies no bound.
    let channel: (any Channel)?
    /// How long one write may take.
    let timeout: Duration
    let metrics: ServerMetrics

    /// Runs one write under the bound.
    func run(_ write: () async throws -> Void) async throws {
        guard let timer = start() else { return try await write() }
        defer { timer.cancel() }
        try await write()
    }

    /// Starts the bound for a write issued now, to be cancelled when it completes; nil without a channel. On the
    /// connection's event loop this costs no thread hop.
    func start() -> Scheduled<Void>? {
        guard let channel else { return nil }
        let metrics = self.metrics
        return channel.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            metrics.recordConnectionTimeout(reason: "send")
            channel.close(promise: nil)
        }
    }
}
