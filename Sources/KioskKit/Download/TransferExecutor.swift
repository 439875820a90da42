import Dispatch

/// Where download transfers run: a concurrent dispatch queue of KioskKit's own instead of Swift's cooperative pool,
/// which is only as wide as the CPU count and must never wait. A transfer waits for the disk on purpose (it hashes
/// what a part file already holds when it resumes, copies and hashes installed files for an update, renames and
/// fsyncs), and on the pool that would hold up every other task of the app meanwhile. Dispatch adds threads while
/// some of its own are blocked.
///
/// A transfer's task prefers this executor (`Task(executorPreference:)`, on the systems that have task executors:
/// Linux, and from iOS 18 and macOS 15 on Apple's systems); its child tasks inherit the preference, and actor
/// methods it calls still run on their actor.
@available(macOS 15, iOS 18, tvOS 18, visionOS 2, *)
final class TransferExecutor: TaskExecutor {
    /// The one executor every client's transfers share.
    static let shared = TransferExecutor()

    private let queue = DispatchQueue(label: "KioskKit.transfer", attributes: .concurrent)
    private static let marker = DispatchSpecificKey<Bool>()

    private init() { queue.setSpecific(key: Self.marker, value: true) }

    /// Whether the calling code runs on this executor's queue (for tests).
    static var isCurrent: Bool { DispatchQueue.getSpecific(key: marker) == true }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

extension Task where Success == Void, Failure == Never {
    /// A transfer's task: on ``TransferExecutor`` where the system has task executors, otherwise on the default
    /// executor.
    @discardableResult
    static func transfer(_ operation: sending @escaping @isolated(any) () async -> Void) -> Task<Void, Never> {
        if #available(macOS 15, iOS 18, tvOS 18, visionOS 2, *) {
            return Task(executorPreference: TransferExecutor.shared, operation: operation)
        }
        return Task(operation: operation)
    }
}
