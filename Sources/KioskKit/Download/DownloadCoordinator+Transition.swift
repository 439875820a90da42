import Foundation
import KioskCore

/// How an event becomes executor actions: the machine's transition, what it changed, and what its action means.
extension DownloadCoordinator {
    /// Whether enqueueing a product whose download is in `state` starts a new download rather than resuming it:
    /// after a cancel, and once installed (a newer version may exist).
    static func startsOver(_ state: DownloadState) -> Bool {
        switch state {
        case .cancelled, .finished: true
        default: false
        }
    }

    /// Sends one event to a download's machine, keeps the result and returns what follows. `requestedByUser`: the
    /// app's call, which may not apply in the download's state (then nothing changes); an internal event the
    /// machine rejects is a bug.
    mutating func transition(
        _ id: DownloadID, requestedByUser: Bool = false,
        _ event: (inout DownloadStateMachine) -> DownloadStateMachine.Action
    ) -> [Action] {
        guard var download = downloads[id] else { return [] }
        let before = download.machine
        let action = event(&download.machine)
        downloads[id] = download
        return committed(id, previous: before) + perform(action, for: id, requestedByUser: requestedByUser)
    }

    /// Journals the machine's state when it changed (or its attempt count), resets the speed when the download
    /// leaves `active`, disarms the timer of a state that armed one, and tells the app about a new state.
    mutating func committed(_ id: DownloadID, previous: DownloadStateMachine) -> [Action] {
        guard var download = downloads[id] else { return [] }
        let changed = previous.state != download.state
        var actions: [Action] = []
        if changed || previous.attempt != download.machine.attempt {
            actions.append(
                .journal([.state(id: id, download.state, attempt: download.machine.attempt)], synchronize: false))
        }
        guard changed else { return actions }
        if download.state != .paused(.insufficientStorage) { download.storageError = nil }
        if download.state != .active {
            download.progress.bytesPerSecond = 0
            download.progress.timeRemaining = nil
            download.estimator = SpeedEstimator()
        }
        downloads[id] = download
        actions.append(.emit(.stateChanged(download.snapshot)))
        // A retry's or a probe's timer belongs to the state that armed it.
        switch previous.state {
        case .waitingToRetry, .waitingForNetwork: actions.append(.disarmTimer(id))
        default: break
        }
        return actions
    }

    /// What the machine's action means for the executor: every case is carried out here.
    mutating func perform(
        _ action: DownloadStateMachine.Action, for id: DownloadID, requestedByUser: Bool
    ) -> [Action] {
        guard let download = downloads[id] else { return [] }
        switch action {
        case .none:
            return []
        case .rejected(let reason):
            if !requestedByUser { KioskDiagnostics.unexpected("download \(download.productID): \(reason)") }
            return []
        case .enqueue:
            return [.schedule]
        case .startTransfer:
            return [.startTransfer(id, work(of: download))]
        case .renewGrant:
            return [.renewGrant(id, work(of: download))]
        case .stopTransfer:
            return [.stopTransfer(id), .schedule]
        case .stopTransferAndDeleteBytes:
            downloads[id]?.apply(.grant(nil, receivedAt: nil))
            downloads[id]?.progress.bytesWritten = 0
            return [
                .stopTransfer(id), .deleteStaging(productID: download.productID),
                .journal([.changed(id: id, .grant(nil, receivedAt: nil))], synchronize: false),
                .finishWaiters(productID: download.productID, .failure(.cancelled(productID: download.productID))),
                .schedule,
            ]
        case .scheduleRetry(let date):
            return [.armRetry(id, at: date)]
        case .probeNetwork(let date):
            return [.armProbe(id, at: date)]
        case .verifyAndInstall:
            guard let grant = download.record.grant else {
                KioskDiagnostics.unexpected("download \(download.productID): staged without a grant")
                return transition(id) { $0.verificationFailed(.invalidResponse("no grant to install")) }
            }
            return [.install(id, productID: download.productID, grant: grant)]
        case .reportInstalled:
            guard let content = installed[download.productID] else { return [] }
            // The app is told only once the journal says so.
            return [
                .journal([], synchronize: true), .emit(.installed(content)),
                .finishWaiters(productID: content.productID, .success(content)),
            ]
        case .reportFailure(let error):
            return [.finishWaiters(productID: download.productID, .failure(error))]
        }
    }

    /// What a new transfer of the download starts from.
    func work(of download: Download) -> DownloadWork {
        var work = download.work
        work.installed = installed[download.productID] ?? damaged[download.productID]
        return work
    }

    /// Drops a download from memory and from the journal.
    mutating func forget(_ id: DownloadID) -> [Action] {
        guard downloads.removeValue(forKey: id) != nil else { return [] }
        return [.journal([.forgotten(id: id)], synchronize: false)]
    }
}
