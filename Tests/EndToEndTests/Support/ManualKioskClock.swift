import Foundation
import Synchronization

@testable import KioskKit

/// A ``KioskClock`` that stands still until the test moves it: a sleep returns once the clock has been moved to
/// its deadline. Lets a test go through minutes of retries and probes in moments, and see each one armed.
final class ManualKioskClock: KioskClock {
    private struct Sleeper {
        let id: UInt64
        let deadline: Date
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Date
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
        /// Sleeps cancelled before they were stored.
        var cancelled: Set<UInt64> = []
    }

    private let state: Mutex<State>

    init(now: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Mutex(State(now: now))
    }

    var now: Date { state.withLock { $0.now } }

    func sleep(until deadline: Date) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock to `date` (never back) and ends the sleeps due by then.
    func advance(to date: Date) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = max(state.now, date)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// The earliest deadline of the sleeps under way, once there is one (polled every 10 ms, for at most
    /// `timeout` seconds of real time).
    func nextDeadline(timeout: Double = 30) async throws -> Date {
        let limit = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < limit {
            if let deadline = state.withLock({ $0.sleepers.map(\.deadline).min() }) { return deadline }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw KioskKitTestSupport.Timeout(what: "a sleep on the manual clock")
    }
}
