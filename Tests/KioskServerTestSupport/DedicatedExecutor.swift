import Foundation

/// A task executor on threads of its own, for the in-process test servers and the tests that time what a transport
/// does: with `Task(executorPreference:)` or `withTaskExecutorPreference`, their tasks and every child task run
/// here, not on Swift's cooperative pool, which the suites running in parallel fill (two threads on two cores). A
/// server there once took over 30 s to accept a connection in a full run.
///
/// `@unchecked Sendable`: `jobs` is only touched with `condition` locked.
package final class DedicatedExecutor: TaskExecutor, @unchecked Sendable {
    /// The executor of the tests' servers and transports.
    package static let shared = DedicatedExecutor(threads: 4, name: "kiosk-tests")

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var next = 0

    private init(threads: Int, name: String) {
        for index in 0..<threads {
            let thread = Thread { [unowned self] in work() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Runs jobs in the order they came, for as long as the process lives.
    private func work() {
        while true {
            condition.lock()
            while next == jobs.count { condition.wait() }
            let job = jobs[next]
            next += 1
            if next > 1024, next * 2 > jobs.count {  // keeps the queue's storage bounded
                jobs.removeFirst(next)
                next = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
