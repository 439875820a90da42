import KioskServer
import Logging

/// A ``KioskHTTPServer`` serving on an ephemeral loopback port in this process, on threads of its own
/// (``DedicatedExecutor``), so that it accepts and answers whatever the other suites give Swift's pool: the one
/// starter of the end-to-end ``TestServer`` and of the server unit tests that speak HTTP to a real server.
package final class LiveKioskServer: Sendable {
    /// The server did not report a bound port.
    package struct DidNotStart: Error, CustomStringConvertible {
        /// What a failed test shows.
        package var description: String { "the server did not start" }
    }

    /// The running server (its catalog, ledger and metrics).
    package let server: KioskHTTPServer
    /// The bound port on 127.0.0.1.
    package let port: Int
    private let task: Task<Void, any Error>
    private let shutdown: ServerShutdown

    private init(server: KioskHTTPServer, port: Int, task: Task<Void, any Error>, shutdown: ServerShutdown) {
        self.server = server
        self.port = port
        self.task = task
        self.shutdown = shutdown
    }

    /// Prepares a server with `configuration` (its port should be 0) and starts it; returns once it listens.
    package static func start(configuration: ServerConfiguration, logger: Logger) async throws -> LiveKioskServer {
        let server = try await KioskHTTPServer(configuration: configuration, logger: logger)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let shutdown = ServerShutdown()
        let task = Task(executorPreference: DedicatedExecutor.shared) {
            defer { continuation.finish() }
            try await server.run(shutdown: shutdown) { _, port in continuation.yield(port) }
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            try await task.value
            throw DidNotStart()
        }
        return LiveKioskServer(server: server, port: port, task: task, shutdown: shutdown)
    }

    /// How long ``stop()`` lets in-flight responses finish.
    package static let stopDeadline = Duration.seconds(10)

    /// Stops the server gracefully. A graceful shutdown rather than a cancellation: cancelling the serving task can
    /// drop accepted connections not yet served, which traps in SwiftNIO (`Deinited NIOAsyncWriter without calling
    /// finish()`). A response still in flight after ``stopDeadline`` (a stalled body, say) is cut by cancelling the
    /// server.
    package func stop() async {
        await shutdown.trigger()
        let task = self.task
        await withTaskGroup(of: Void.self) { group in
            group.addTask { _ = try? await task.value }
            group.addTask {
                try? await Task.sleep(for: Self.stopDeadline)  // cancelled when the server ends first
                if !Task.isCancelled { task.cancel() }
            }
            await group.next()
            group.cancelAll()
        }
    }
}
