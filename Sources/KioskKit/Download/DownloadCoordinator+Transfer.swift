import Foundation
import KioskCore

/// Events from a download's transfer and install tasks.
extension DownloadCoordinator {
    /// The engine changed the download's grant or files (new grant, validator, verified file or chunk).
    /// Returns the journal entries (the executor appends them with the files they must make durable) and what
    /// follows: a checkpoint is progress, so the attempt count starts over. Ignored once the download is cancelled
    /// (its grant and bytes are gone).
    mutating func checkpoint(_ id: DownloadID, _ changes: [DownloadChange]) -> ([JournalEntry], [Action]) {
        guard downloads[id].map({ $0.state != .cancelled }) == true else { return ([], []) }
        // In place, never on a copy: a copy would make each change copy the download's per-file sets, which grow
        // with the product's files (O(files) per checkpoint).
        downloads[id]?.apply(checkpoint: changes)
        // A count of hash failures is the opposite of progress.
        let progressed = changes.contains { if case .integrityFailures = $0 { false } else { true } }
        return (changes.map { .changed(id: id, $0) }, progressed ? madeProgress(id) : [])
    }

    /// Bytes kept are progress: the attempt count starts over.
    mutating func madeProgress(_ id: DownloadID) -> [Action] {
        guard case .active? = downloads[id]?.state else { return [] }
        return transition(id) { machine in
            machine.madeProgress()
            return .none
        }
    }

    /// The engine reports `written` of `expected` bytes at `instant`. Updates the speed and time remaining, and
    /// sends a progress event at most every `progressInterval` (and when complete).
    mutating func progress(
        _ id: DownloadID, written: Int64, expected: Int64, at instant: ContinuousClock.Instant,
        since epoch: ContinuousClock.Instant,
        now: ContinuousClock.Instant
    ) -> [Action] {
        guard var download = downloads[id], case .active = download.state else { return [] }
        if let last = download.lastProgressSample, instant < last { return [] }  // a report that arrived late
        download.lastProgressSample = instant
        // Bytes kept on disk are progress: an attempt that made some does not count towards the retry limit, and
        // the backoff starts over (a network that cuts every connection after a few MiB still gets there).
        var actions: [Action] = []
        let progressed = written > download.progress.bytesWritten && download.machine.attempt > 0
        download.progress.bytesWritten = written
        download.progress.bytesExpected = expected
        // The speed is the network's: bytes copied from the installed version are not measured.
        download.estimator.record(bytes: download.progress.bytesFetched, at: (instant - epoch).timeInterval)
        download.progress.bytesPerSecond = download.estimator.bytesPerSecond ?? 0
        download.progress.timeRemaining = download.estimator.timeRemaining(forRemaining: expected - written)
        let due = download.lastProgressEvent.map { now - $0 >= progressInterval } ?? true
        if due || written >= expected { download.lastProgressEvent = now }
        downloads[id] = download
        if progressed { actions += madeProgress(id) }
        if due || written >= expected, let snapshot = downloads[id]?.snapshot {
            actions.append(.emit(.progress(snapshot)))
        }
        return actions
    }

    /// The transfer task ended: with its content staged, with the installed content found current, with a need of a
    /// new grant, or with an error. A download paused or cancelled meanwhile stays as it is (the stop was
    /// intentional; staged files wait for the resume).
    mutating func transferEnded(_ id: DownloadID, _ result: Result<TransferOutcome, any Error>, now: Date) -> [Action] {
        guard let download = downloads[id], case .active = download.state else { return [.schedule] }
        var actions: [Action]
        switch result {
        case .success(.staged):
            actions = transition(id) { $0.transferCompleted() }
        case .success(.alreadyInstalled(let content)):
            return installEnded(id, .success(content))  // nothing to move: `active` → `finished`
        case .success(.needsNewGrant(let reason)):
            let policy = retryPolicy
            actions = transition(id) { $0.grantNeeded(reason.error, now: now, policy: policy) }
        case .failure(let error) where error is CancellationError:
            actions = []  // a stop the engine saw before the machine did (pause, cancel and close come first)
        case .failure(let error):
            let kioskError = (error as? KioskError) ?? .fileSystem(path: download.productID, underlying: "\(error)")
            if kioskError.apiCode == .notFound, download.record.grant == nil {
                // The server knows no such product: nothing was fetched and nothing will be. The download is
                // forgotten, not kept failed across launches, and the callers waiting for it learn why.
                let productID = download.productID
                return forget(id) + [
                    .deleteStaging(productID: productID), .journal([], synchronize: true),
                    .finishWaiters(productID: productID, .failure(.notFound(productID: productID))), .schedule,
                ]
            }
            let policy = retryPolicy
            actions = transition(id) { $0.transferFailed(kioskError, now: now, policy: policy) }
            if downloads[id]?.state == .paused(.insufficientStorage) {
                // Nothing more happens without the app: the waiters learn why (the download stays resumable).
                downloads[id]?.storageError = kioskError
                actions.append(.finishWaiters(productID: download.productID, .failure(kioskError)))
            }
        }
        return actions + [.schedule]
    }

    /// The staged content was moved into place (``Action/install(_:productID:grant:)``), or could not be. Content
    /// moved into place after a cancel is deleted: the app does not want it. Installed content is reported to the
    /// server with the grant that opened it (``Action/reportDelivery(_:)``).
    mutating func installEnded(_ id: DownloadID, _ result: Result<InstalledContent, KioskError>) -> [Action] {
        guard let download = downloads[id] else { return [.schedule] }
        switch (download.state, result) {
        case (.cancelled, .success(let content)): return [.deleteContent(content), .schedule]
        case (.cancelled, .failure): return [.schedule]
        case (_, .failure(let error)): return transition(id) { $0.verificationFailed(error) } + [.schedule]
        case (_, .success(let content)):
            var actions: [Action] = []
            if let previous = installed[content.productID], previous.directory != content.directory {
                actions.append(download.keepsPrevious ? .keepContent(previous) : .deleteContent(previous))
            }
            installed[content.productID] = content
            damaged[content.productID] = nil
            downloads[id]?.finish(with: content)
            actions += [.recordMarker(content), .journal([.installed(content)], synchronize: false)]
            if let grant = download.record.grant, grant.contentVersion == content.version {
                actions.append(
                    .reportDelivery(
                        DeliveryReport(
                            productID: content.productID, contentVersion: content.version, token: grant.token)))
            }
            return actions + transition(id) { $0.installed() } + [.schedule]
        }
    }

}
