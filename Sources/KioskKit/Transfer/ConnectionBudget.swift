import Foundation

/// The per-host connection budget: at most ``limit`` content requests in flight, whatever asks for them (the files
/// of every download in flight now; the ranges of one large file later). Every holder of a permit gives it back with
/// ``release()``; ``withPermit(_:)`` does both.
///
/// Waiters are served in the order they asked. A waiter whose task is cancelled leaves the queue at once and throws
/// `CancellationError`; it never holds a permit. A permit given back goes straight to the first waiter, so a newcomer
/// cannot overtake the queue.
final class ConnectionBudget: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var available: Int
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    /// The most permits out at once.
    let limit: Int
    private let state: Locked<State>

    /// A budget of `limit` permits (at least 1).
    init(limit: Int) {
        self.limit = max(1, limit)
        state = Locked(State(available: max(1, limit)))
    }

    /// Permits out now (for tests and diagnostics).
    var inUse: Int { state.withLock { limit - $0.available } }

    /// Tasks waiting for a permit now (for tests and diagnostics).
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Waits for a permit. Throws `CancellationError` if the calling task is cancelled before it gets one.
    func acquire() async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    // Checked under the lock: a cancellation either comes before (seen here) or finds the waiter.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.available > 0, state.waiters.isEmpty {
                        state.available -= 1
                        return .success(())
                    }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Gives a permit back: to the first waiter if there is one.
    func release() {
        let next = state.withLock { state -> Waiter? in
            if state.waiters.isEmpty {
                state.available = min(limit, state.available + 1)
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.continuation.resume()
    }

    /// Runs `body` holding a permit, given back however `body` ends.
    func withPermit<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        try await acquire()
        defer { release() }
        return try await body()
    }
}
