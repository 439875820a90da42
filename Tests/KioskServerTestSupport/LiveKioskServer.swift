import Foundation
import KioskServer
import Logging
import Synchronization

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
    /// server. A server still running ``stopDeadline`` after that is left behind, said on standard error: a test run
    /// that never ends (CI waits for it until its time limit) would hide which server hung.
    package func stop() async {
        await shutdown.trigger()
        guard await !Self.finishes(task, within: Self.stopDeadline) else { return }
        task.cancel()
        guard await !Self.finishes(task, within: Self.stopDeadline) else { return }
        FileHandle.standardError.write(
            Data(
                ("LiveKioskServer: the server on port \(port) (database \(server.configuration.databaseURL)) did not "
                    + "stop within \(Self.stopDeadline * 2) of its shutdown; left running\n").utf8))
    }

    /// Whether `task` ends within `limit`. Waits without a task group, which would wait for a task that never ends.
    private static func finishes(_ task: Task<Void, any Error>, within limit: Duration) async -> Bool {
        let answered = Mutex(false)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer: @Sendable (Bool) -> Void = { finished in
                let first = answered.withLock { answered in
                    defer { answered = true }
                    return !answered
                }
                if first { continuation.resume(returning: finished) }
            }
            Task {
                _ = try? await task.value
                answer(true)
            }
            Task {
                try? await Task.sleep(for: limit)
                answer(false)
            }
        }
    }
}
