import Foundation
import KioskCore
import Testing

@testable import KioskKit

/// The app's pause, resume and cancel in every state a download can be in, through the coordinator: what the
/// executor is asked to do (stop a transfer, disarm a timer, delete bytes, tell the waiters), and that a call that
/// does not apply changes nothing. An internal event the machine rejected would stop these debug-built tests.
extension DownloadCoordinatorTests {
    /// Brings a download of `p1` into `state` through the events that lead there; one queue slot, held by `p0` for
    /// `waiting`.
    func executor(with state: DownloadState) -> (MockExecutor, DownloadID) {
        var executor = executor(slots: 1)
        if state == .waiting { executor.enqueue("p0") }
        let id = executor.enqueue("p1")
        let unauthorized = KioskError.server(status: 401, code: "unauthorized", message: "No.", retryAfter: nil)
        switch state {
        case .waiting, .active: break
        case .verifying: executor.stage(id)
        case .paused(.user): executor.run(executor.coordinator.pause(id, reason: .user))
        case .paused(.insufficientStorage):
            executor.run(
                executor.coordinator.transferEnded(
                    id, .failure(KioskError.insufficientStorage(needed: 10, available: 1)), now: Self.now))
        case .waitingToRetry: executor.run(executor.coordinator.transferEnded(id, .failure(busy), now: Self.now))
        case .waitingForNetwork:
            executor.run(executor.coordinator.transferEnded(id, .failure(network), now: Self.now))
        case .finished: executor.install(id, content("p1"))
        case .failed: executor.run(executor.coordinator.transferEnded(id, .failure(unauthorized), now: Self.now))
        case .cancelled: executor.run(executor.coordinator.cancel(id))
        }
        #expect(executor.coordinator.downloads[id]?.state.name == state.name, "set-up of \(state.name)")
        return (executor, id)
    }

    static let everyState: [DownloadState] = [
        .waiting, .active, .verifying, .paused(.user), .paused(.insufficientStorage),
        .waitingToRetry(until: now, attempt: 1), .waitingForNetwork, .finished,
        .failed(.server(status: 401, code: "unauthorized", message: "No.", retryAfter: nil)), .cancelled,
    ]

    @Test(arguments: everyState)
    func pauseInEveryState(_ state: DownloadState) {
        var (executor, id) = executor(with: state)
        let lines = executor.event { $0.pause(id, reason: .user) }
        let after = executor.coordinator.downloads[id]?.state
        switch state {
        case .active:
            #expect(after == .paused(.user))
            #expect(lines.contains("stop p1") && !executor.running.contains(id))
        case .waitingToRetry, .waitingForNetwork:
            #expect(after == .paused(.user))
            #expect(lines.contains("disarm p1") && !lines.contains("stop p1"))
        case .waiting, .paused(.insufficientStorage):
            #expect(after == .paused(.user))
            #expect(lines.prefix(2) == ["journal state paused 0", "state p1 paused"] && !lines.contains("stop p1"))
        case .paused(.user), .verifying, .finished, .failed, .cancelled:
            // Already paused, about to finish, or ended: nothing to do.
            #expect(after?.name == state.name)
            #expect(lines.isEmpty)
        }
    }

    @Test(arguments: everyState)
    func resumeInEveryState(_ state: DownloadState) {
        var (executor, id) = executor(with: state)
        let lines = executor.event { $0.resume(id) }
        let after = executor.coordinator.downloads[id]?.state
        switch state {
        case .paused, .failed:
            // Back in the queue, with the attempts starting over; the slot is free, so it starts.
            #expect(after == .active && executor.coordinator.downloads[id]?.machine.attempt == 0)
            #expect(lines.suffix(2) == ["state p1 active", "start p1"])
        case .waitingForNetwork:
            #expect(after == .active)
            #expect(lines.contains("disarm p1") && lines.last == "start p1")
        case .waiting, .active, .verifying, .waitingToRetry, .finished, .cancelled:
            // On its way already (a retry keeps its backoff), or ended: nothing to do.
            #expect(after?.name == state.name)
            #expect(lines.isEmpty)
        }
    }

    @Test(arguments: everyState)
    func cancelInEveryState(_ state: DownloadState) {
        var (executor, id) = executor(with: state)
        let lines = executor.event { $0.cancel(id) }
        let after = executor.coordinator.downloads[id]?.state
        switch state {
        case .finished, .cancelled:
            #expect(after?.name == state.name)
            #expect(lines.isEmpty)
        default:
            #expect(after == .cancelled)
            #expect(lines.contains("stop p1") && lines.contains("delete staging p1"))
            #expect(lines.contains("waiters p1 cancelled") && lines.contains("journal grant none"))
            #expect(lines.contains("disarm p1") == (state.name == "waiting_to_retry" || state == .waitingForNetwork))
            #expect(executor.coordinator.downloads[id]?.progress.bytesWritten == 0)
        }
    }
}
