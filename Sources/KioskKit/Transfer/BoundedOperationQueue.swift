import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A serial `OperationQueue` that makes whoever adds work wait while `limit` blocks are pending: the delegate queue of
/// an ``APIClient`` session. swift-corelibs-foundation hands every chunk a transfer receives (gzip already inflated) to
/// the delegate queue without waiting, so a fast or inflating answer piles up in memory faster than the delegate can
/// count it and cancel; blocking the session's queue here stops libcurl reading the socket until the delegate catches
/// up. Apple's URLSession applies its own back-pressure; the wait then rarely happens.
///
/// `@unchecked Sendable`: `pending` and `runner` are guarded by `condition`.
final class BoundedOperationQueue: OperationQueue, @unchecked Sendable {
    private let limit: Int
    private let condition = NSCondition()
    private var pending = 0
    /// The thread running one of this queue's blocks, if any (`OperationQueue.current` is not reliable here).
    private var runner: Thread?

    init(limit: Int) {
        self.limit = limit
        super.init()
        maxConcurrentOperationCount = 1
    }

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        condition.lock()
        // Work added from this queue's own blocks never waits (it would wait for itself).
        while pending >= limit, runner !== Thread.current { condition.wait() }
        pending += 1
        condition.unlock()
        super.addOperation { [condition] in
            condition.lock()
            self.runner = Thread.current
            condition.unlock()
            block()
            condition.lock()
            self.runner = nil
            self.pending -= 1
            condition.broadcast()
            condition.unlock()
        }
    }
}
