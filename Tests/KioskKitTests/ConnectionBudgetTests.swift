import Foundation
import Testing

@testable import KioskKit

/// The per-host connection budget every download draws from (#16, and #9's ranges later).
@Suite("Connection budget", .timeLimit(.minutes(5)))
struct ConnectionBudgetTests {
    /// Yields until `condition` holds (bounded: fails after 10,000 yields).
    func yield(until what: String, _ condition: () -> Bool) async throws {
        for _ in 0..<10_000 where !condition() { await Task.yield() }
        try #require(condition(), "\(what)")
    }

    /// 40 tasks, many times the limit, each holding its permit across two yields so that holders overlap. Each
    /// yield waits for a turn of the shared pool, which a loaded full run stretches (200 tasks once took over a
    /// minute there, and 40 over 60 s with a build running beside the run); the count of tasks is what bounds the
    /// test, not a clock: the suite's time limit is only a guard against a hang.
    @Test func permitsNeverExceedTheLimitUnderConcurrentAcquires() async throws {
        let budget = ConnectionBudget(limit: 3)
        let holders = Locked((now: 0, most: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    try await budget.withPermit {
                        holders.withLock {
                            $0.now += 1
                            $0.most = max($0.most, $0.now)
                        }
                        await Task.yield()
                        await Task.yield()
                        holders.withLock { $0.now -= 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        let seen = holders.withLock { $0 }
        #expect(seen.most >= 1 && seen.most <= 3)
        #expect(seen.now == 0)
        #expect(budget.inUse == 0)
        #expect(budget.waiting == 0)
    }

    @Test func aCancelledWaiterLeavesTheQueueAndLeaksNoPermit() async throws {
        let budget = ConnectionBudget(limit: 1)
        try await budget.acquire()
        let waiter = Task { try await budget.acquire() }
        try await yield(until: "the waiter is queued") { budget.waiting == 1 }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(budget.waiting == 0)
        #expect(budget.inUse == 1)  // still the first holder's, not the cancelled waiter's
        budget.release()
        #expect(budget.inUse == 0)
        // The whole budget is free again: a new acquire does not wait.
        try await budget.acquire()
        #expect(budget.inUse == 1)
        budget.release()
    }

    @Test func aTaskCancelledBeforeAcquiringThrowsAndTakesNothing() async throws {
        let budget = ConnectionBudget(limit: 2)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await budget.acquire()
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(budget.inUse == 0)
        #expect(budget.waiting == 0)
    }

    @Test func releaseWakesTheWaitersInTheOrderTheyAsked() async throws {
        let budget = ConnectionBudget(limit: 1)
        try await budget.acquire()
        let order = Locked<[Int]>([])
        var waiters: [Task<Void, any Error>] = []
        for index in 0..<5 {
            waiters.append(
                Task {
                    try await budget.acquire()
                    order.withLock { $0.append(index) }
                    budget.release()
                })
            try await yield(until: "waiter \(index) is queued") { budget.waiting == index + 1 }
        }
        budget.release()
        for waiter in waiters { try await waiter.value }
        #expect(order.withLock { $0 } == [0, 1, 2, 3, 4])
        #expect(budget.inUse == 0)
    }

    @Test func aLimitBelowOneIsOne() {
        #expect(ConnectionBudget(limit: 0).limit == 1)
    }
}
