import Foundation
import Testing

@testable import KioskKit

@Suite("DownloadStateMachine")
struct DownloadStateMachineTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let policy = RetryPolicy(baseDelay: 1, maximumDelay: 60, maximumAttempts: 3)
    let network = KioskError.network(code: -1005, underlying: "lost")
    let busy = KioskError.server(status: 503, code: "server_error", message: "Busy.", retryAfter: nil)
    let notEntitled = KioskError.server(status: 403, code: "not_entitled", message: "No.", retryAfter: nil)

    func machine(_ state: DownloadState, attempt: Int = 0) -> DownloadStateMachine {
        DownloadStateMachine(state: state, attempt: attempt, maximumAttempts: 3)
    }

    static let allStates: [DownloadState] = [
        .waiting, .active, .paused(.user), .paused(.insufficientStorage),
        .waitingToRetry(until: Date(timeIntervalSince1970: 0), attempt: 1), .waitingForNetwork, .verifying, .finished,
        .failed(.network(code: 1, underlying: "x")), .cancelled,
    ]

    @Test func aNeedForAGrantRenewsUpToTheLimitThenIsATransferFailure() {
        let expired = KioskError.server(status: 401, code: "token_expired", message: "Expired.", retryAfter: nil)
        var m = machine(.waiting)
        _ = m.start()
        for renewal in 1...DownloadStateMachine.maximumRenewalsWithoutProgress {
            #expect(m.grantNeeded(expired, now: now, policy: policy) == .renewGrant)
            #expect(m.state == .active && m.renewalsWithoutProgress == renewal)
        }
        m.verified()
        #expect(m.renewalsWithoutProgress == 0)
        for _ in 0..<4 { _ = m.grantNeeded(expired, now: now, policy: policy) }
        #expect(m.grantNeeded(expired, now: now, policy: policy) == .reportFailure(expired))
        #expect(m.state == .failed(expired))
        // Only an active transfer needs a grant.
        for state in Self.allStates where state != .active {
            var other = machine(state)
            guard case .rejected = other.grantNeeded(expired, now: now, policy: policy) else {
                Issue.record("grantNeeded accepted while \(state.name)")
                continue
            }
            #expect(other.state == state)
        }
    }

    @Test func happyPath() {
        var m = DownloadStateMachine()
        #expect(m.state == .waiting)
        #expect(m.start() == .startTransfer)
        #expect(m.state == .active)
        #expect(m.transferCompleted() == .verifyAndInstall)
        #expect(m.state == .verifying)
        #expect(m.installed() == .reportInstalled)
        #expect(m.state == .finished)
        #expect(m.state.isTerminal)
    }

    @Test(arguments: allStates)
    func startOnlyFromWaiting(_ state: DownloadState) {
        var m = machine(state)
        let action = m.start()
        if state == .waiting {
            #expect(action == .startTransfer)
        } else {
            guard case .rejected = action else { Issue.record("start from \(state) gave \(action)"); return }
            #expect(m.state == state)
        }
    }

    @Test(arguments: allStates)
    func pause(_ state: DownloadState) {
        var m = machine(state)
        let action = m.pause(.user)
        switch state {
        case .active:
            #expect(action == .stopTransfer)
            #expect(m.state == .paused(.user))
        case .waiting, .waitingToRetry, .waitingForNetwork, .paused:
            #expect(action == DownloadStateMachine.Action.none)
            #expect(m.state == .paused(.user))
        default:
            guard case .rejected = action else { Issue.record("pause from \(state) gave \(action)"); return }
            #expect(m.state == state)
        }
    }

    @Test(arguments: allStates)
    func resume(_ state: DownloadState) {
        var m = machine(state, attempt: 2)
        let action = m.resume()
        switch state {
        case .paused, .failed:
            #expect(action == .enqueue)
            #expect(m.state == .waiting)
            #expect(m.attempt == 0)
        case .waitingForNetwork:
            // The app says the network is back: at once, with the attempts it had.
            #expect(action == .enqueue)
            #expect(m.state == .waiting)
            #expect(m.attempt == 2)
        case .finished, .cancelled:
            guard case .rejected = action else { Issue.record("resume from \(state) gave \(action)"); return }
            #expect(m.state == state)
        default:
            #expect(action == DownloadStateMachine.Action.none)
            #expect(m.state == state)
        }
    }

    @Test(arguments: allStates)
    func cancel(_ state: DownloadState) {
        var m = machine(state)
        let action = m.cancel()
        switch state {
        case .finished, .cancelled:
            guard case .rejected = action else { Issue.record("cancel from \(state) gave \(action)"); return }
            #expect(m.state == state)
        default:
            #expect(action == .stopTransferAndDeleteBytes)
            #expect(m.state == .cancelled)
        }
    }

    @Test func transientFailureSchedulesRetryThenFailsAfterMaximumAttempts() {
        var m = machine(.active)
        let first = m.transferFailed(busy, now: now, policy: policy, random: 0)
        #expect(first == .scheduleRetry(at: now.addingTimeInterval(0.5)))
        #expect(m.state == .waitingToRetry(until: now.addingTimeInterval(0.5), attempt: 1))
        #expect(m.retryDue() == .enqueue)
        #expect(m.state == .waiting)
        _ = m.start()
        let second = m.transferFailed(busy, now: now, policy: policy, random: 1)
        #expect(second == .scheduleRetry(at: now.addingTimeInterval(2)))
        _ = m.retryDue()
        _ = m.start()
        let third = m.transferFailed(busy, now: now, policy: policy, random: 0)
        #expect(third == .reportFailure(busy))
        #expect(m.state == .failed(busy))
    }

    /// No network: one change of state, to `waitingForNetwork`; probes that find the server still unreachable change
    /// nothing and use up no attempts, however many there are (here 50, past every retry budget), their interval
    /// doubling up to the policy's maximum; the first probe that reaches it makes the download go on.
    @Test func anUnreachableServerIsWaitedForWithoutUsingUpAttempts() {
        var m = machine(.active)
        #expect(m.transferFailed(network, now: now, policy: policy, random: 1) == .probeNetwork(at: now + 1))
        #expect(m.state == .waitingForNetwork)
        #expect(m.attempt == 1)
        var delays: [TimeInterval] = []
        for _ in 0..<50 {
            guard case .probeNetwork(let at) = m.networkUnreachable(now: now, policy: policy, random: 1) else {
                Issue.record("no probe armed")
                return
            }
            delays.append(at.timeIntervalSince(now))
            #expect(m.state == .waitingForNetwork)
        }
        #expect(Array(delays.prefix(7)) == [2, 4, 8, 16, 32, 60, 60])
        #expect(delays.allSatisfy { $0 <= policy.maximumDelay })
        #expect(m.attempt == 1)
        #expect(m.networkReachable() == .enqueue)
        #expect(m.state == .waiting)
        #expect(m.unreachableProbes == 0)
        // Only a download waiting for the network takes a probe's answer.
        for state in Self.allStates where state != .waitingForNetwork {
            var other = machine(state)
            guard case .rejected = other.networkReachable(), case .rejected = other.networkUnreachable(
                now: now, policy: policy)
            else {
                Issue.record("a probe's answer accepted while \(state.name)")
                continue
            }
            #expect(other.state == state)
        }
    }

    /// A server that answers probes but fails every transfer as unreachable (a network that cuts each connection
    /// before a byte) still uses up the attempts: waiting cannot fix it.
    @Test func transfersThatFailWhileTheServerAnswersProbesStillUseUpTheAttempts() {
        var m = machine(.active)
        for _ in 0..<2 {
            guard case .probeNetwork = m.transferFailed(network, now: now, policy: policy) else {
                Issue.record("no probe armed")
                return
            }
            #expect(m.networkReachable() == .enqueue)
            #expect(m.start() == .startTransfer)
        }
        #expect(m.transferFailed(network, now: now, policy: policy) == .reportFailure(network))
        #expect(m.state == .failed(network))
    }

    @Test func progressResetsAttempts() {
        var m = machine(.active, attempt: 2)
        m.madeProgress()
        #expect(m.attempt == 0)
    }

    @Test func retryAfterIsHonoured() {
        var m = machine(.active)
        let busy = KioskError.server(status: 503, code: "store_unavailable", message: "Busy.", retryAfter: 7)
        #expect(m.transferFailed(busy, now: now, policy: policy) == .scheduleRetry(at: now.addingTimeInterval(7)))
    }

    @Test func permanentFailureFailsAtOnce() {
        var m = machine(.active)
        #expect(m.transferFailed(notEntitled, now: now, policy: policy) == .reportFailure(notEntitled))
        #expect(m.state == .failed(notEntitled))
        let notFound = KioskError.server(status: 404, code: "not_found", message: "Gone.", retryAfter: nil)
        var other = machine(.active)
        #expect(other.transferFailed(notFound, now: now, policy: policy) == .reportFailure(notFound))
    }

    @Test func insufficientStoragePauses() {
        var m = machine(.active)
        let full = KioskError.insufficientStorage(needed: 10, available: 1)
        #expect(m.transferFailed(full, now: now, policy: policy) == DownloadStateMachine.Action.none)
        #expect(m.state == .paused(.insufficientStorage))
        #expect(m.resume() == .enqueue)
    }

    @Test func verificationFailure() {
        var m = machine(.verifying)
        let error = KioskError.integrity(productID: "p", path: "a", expectedSHA256: "x", actualSHA256: "y")
        #expect(m.verificationFailed(error) == .reportFailure(error))
        #expect(m.state == .failed(error))
    }

    @Test(arguments: allStates)
    func eventsOnlyValidInOneState(_ state: DownloadState) {
        var a = machine(state)
        if case .rejected = a.transferCompleted() { #expect(state != .active) } else { #expect(state == .active) }
        var b = machine(state)
        let installable: Bool
        switch state {
        case .verifying, .active, .paused: installable = true
        default: installable = false
        }
        if case .rejected = b.installed() {
            #expect(!installable)
        } else {
            #expect(installable)
            #expect(b.state == .finished)
        }
        var c = machine(state)
        let retry = c.retryDue()
        if case .waitingToRetry = state {
            #expect(retry == .enqueue)
        } else {
            guard case .rejected = retry else { Issue.record("retryDue from \(state)"); return }
        }
        var d = machine(state)
        let failed = d.transferFailed(network, now: now, policy: policy)
        if state == .active {
            #expect(failed != .rejected(""))
        } else {
            guard case .rejected = failed else { Issue.record("transferFailed from \(state)"); return }
            #expect(d.state == state)
        }
        var e = machine(state)
        if case .rejected = e.verificationFailed(network) {
            #expect(state != .verifying)
        } else {
            #expect(state == .verifying)
        }
    }

    @Test func recoveryAfterLaunch() {
        for state: DownloadState in [
            .active, .verifying, .waitingToRetry(until: now, attempt: 2), .waitingForNetwork, .waiting,
        ] {
            var m = machine(state)
            #expect(m.recoverAfterLaunch() == .enqueue)
            #expect(m.state == .waiting)
        }
        for state: DownloadState in [.paused(.user), .finished, .cancelled, .failed(network)] {
            var m = machine(state)
            #expect(m.recoverAfterLaunch() == DownloadStateMachine.Action.none)
            #expect(m.state == state)
        }
    }
}

@Suite("DownloadQueue")
struct DownloadQueueTests {
    @Test func priorityThenFIFO() {
        let a = DownloadQueue.Entry(id: DownloadID(), priority: .normal, sequence: 1)
        let b = DownloadQueue.Entry(id: DownloadID(), priority: .high, sequence: 2)
        let c = DownloadQueue.Entry(id: DownloadID(), priority: .normal, sequence: 0)
        let d = DownloadQueue.Entry(id: DownloadID(), priority: .low, sequence: 3)
        let queue = DownloadQueue(maximumConcurrent: 2)
        #expect(queue.order([a, b, c, d]).map(\.id) == [b.id, c.id, a.id, d.id])
        #expect(queue.toStart(waiting: [a, b, c, d], activeCount: 0) == [b.id, c.id])
        #expect(queue.toStart(waiting: [a, b, c, d], activeCount: 1) == [b.id])
        #expect(queue.toStart(waiting: [a, b, c, d], activeCount: 2) == [])
        #expect(DownloadQueue(maximumConcurrent: 0).maximumConcurrent == 1)
    }
}
