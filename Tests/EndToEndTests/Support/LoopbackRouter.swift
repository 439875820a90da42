import Hummingbird
import Logging

/// A test's own small HTTP server: `router` served on an ephemeral loopback port, logging nothing below critical.
enum LoopbackRouter {
    /// Starts serving `router`; returns the bound port and the task to cancel to stop it.
    static func start(
        _ router: Router<BasicRequestContext>, label: String
    ) async throws -> (port: Int, task: Task<Void, any Error>) {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: label)
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) }, logger: logger)
        let task = Task { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw TestServerError.didNotStart }
        return (port, task)
    }
}
