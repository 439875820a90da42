import NIOCore
import NIOPosix
import ServiceLifecycle

/// A task executor that runs each job on the event loop it was enqueued from, so that a connection's task reads,
/// answers and writes on its channel's own thread.
///
/// Without it, every request costs two thread hand-offs: the event loop resumes the connection's task on Swift's
/// global executor (a futex wake and a context switch), and the answer's writes go back to the event loop
/// (BENCHMARKS.md, "The launch-day spike"). With the HTTP server's tasks preferring this executor, a channel's event
/// loop resumes its connection's task and runs it at once, as nginx runs a request on its worker. A job enqueued from
/// any other thread (a database pool, a timer of another group) goes to the group's next loop.
///
/// Work that may hold a thread for long (hashing a catalog) must not run under this preference: it would delay every
/// connection of its loop.
final class EventLoopTaskExecutor: TaskExecutor {
    private let group: any EventLoopGroup
    /// The group's loops, to tell them from loops of other groups (which may shut down before a job runs).
    private let loops: Set<ObjectIdentifier>

    /// An executor over the loops of `group`.
    init(group: any EventLoopGroup) {
        self.group = group
        self.loops = Set(group.makeIterator().map { ObjectIdentifier($0) })
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let loop =
            MultiThreadedEventLoopGroup.currentEventLoop.flatMap { loops.contains(ObjectIdentifier($0)) ? $0 : nil }
            ?? group.next()
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// Runs a service's tasks with ``EventLoopTaskExecutor`` as their executor preference (inherited by the child tasks
/// it starts, such as one task per connection).
struct EventLoopAffineService<Base: Service>: Service {
    let base: Base
    let executor: EventLoopTaskExecutor

    func run() async throws {
        try await withTaskExecutorPreference(executor) { try await base.run() }
    }
}
