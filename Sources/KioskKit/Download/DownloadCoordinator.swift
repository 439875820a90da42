import Foundation
import KioskCore

/// Owns every download and the installed content, and decides what happens to them. Each event is a mutating
/// method that returns the ``Action``s to carry out, in order; the ``KioskClient`` executes them (journal, tasks,
/// timers, events, files) and has no state of its own about downloads. No I/O and no clock in here: times come in
/// as arguments, so tests drive the coordinator with a mock executor.
///
/// Every event of a download's lifecycle goes through its ``DownloadStateMachine``, and every machine action is
/// turned into executor actions in one place (``perform(_:for:requestedByUser:)``). A user call that does not apply
/// in the download's state (a pause of a finished download) changes nothing; an internal event the machine rejects
/// is a bug: it stops debug builds and is reported in release builds (``KioskDiagnostics``).
struct DownloadCoordinator: Sendable {
    /// A side effect for the executor, carried out in the order returned.
    enum Action: Sendable {
        /// Append entries to the journal; with `synchronize`, wait until they are durable before going on.
        case journal([JournalEntry], synchronize: Bool)
        /// Start the engine on the download (a task that reports back with the engine's hooks).
        case startTransfer(DownloadID, DownloadWork)
        /// Start the engine on the download as for ``startTransfer(_:_:)``, asking for a new grant first.
        case renewGrant(DownloadID, DownloadWork)
        /// Move the download's staged content into place (a task that reports back with
        /// ``DownloadCoordinator/installEnded(_:_:)``).
        case install(DownloadID, productID: String, grant: Grant)
        /// Cancel the download's task (a transfer or an install), if any, and wait until it has ended.
        case stopTransfer(DownloadID)
        /// Arm (replacing any) the download's timer: it calls ``DownloadCoordinator/retryDue(_:)`` at the date.
        case armRetry(DownloadID, at: Date)
        /// Arm (replacing any) the download's timer: at the date it asks the server whether it is reachable and
        /// calls ``DownloadCoordinator/networkProbed(_:reachable:now:)`` with the answer.
        case armProbe(DownloadID, at: Date)
        /// Disarm the download's timer (a retry or a probe), if any.
        case disarmTimer(DownloadID)
        /// Send an event to the app's streams and observers.
        case emit(KioskEvent)
        /// End every ``KioskClient/waitUntilInstalled(productID:)`` call waiting for the product.
        case finishWaiters(productID: String, Result<InstalledContent, KioskError>)
        /// Delete the product's staging folder (the bytes of its download).
        case deleteStaging(productID: String)
        /// Delete installed content's folder (never content moved out of the caches).
        case deleteContent(InstalledContent)
        /// Move the previous version's folder to ``CacheLayout/kept(productID:version:)`` (content moved out of the
        /// caches stays where it is).
        case keepContent(InstalledContent)
        /// Record the installed content's marker (what the reconciler checks).
        case recordMarker(InstalledContent)
        /// Forget the product's marker.
        case forgetMarker(productID: String)
        /// Offer free slots of the queue now (``DownloadCoordinator/schedule()``); after a stop, once it has ended.
        case schedule
    }

    private(set) var downloads: [DownloadID: Download] = [:]
    /// Installed content by product ID.
    private(set) var installed: [String: InstalledContent] = [:]
    /// Installed content that lost some of its files (a purge of Caches), by product ID: not installed any more, but
    /// what is left is copied by the product's next download, which fetches only the rest. The journal keeps it as
    /// installed, so a relaunch finds it damaged again.
    private(set) var damaged: [String: InstalledContent] = [:]
    private(set) var nextSequence: UInt64
    private let queue: DownloadQueue
    private let retryPolicy: RetryPolicy
    private let progressInterval: Duration
    /// Recovers the journal's downloads after a launch (a transfer that was running starts over from the bytes on
    /// disk; a grant that fails today's checks is dropped) and its installed content.
    init(
        snapshot: JournalSnapshot, queue: DownloadQueue, retryPolicy: RetryPolicy, progressInterval: Duration,
        grantLimits: GrantLimits
    ) {
        self.queue = queue
        self.retryPolicy = retryPolicy
        self.progressInterval = progressInterval
        nextSequence = snapshot.nextSequence
        for record in snapshot.downloads {
            var machine = DownloadStateMachine(
                state: record.state, attempt: record.attempt, maximumAttempts: retryPolicy.maximumAttempts)
            _ = machine.recoverAfterLaunch()
            downloads[record.id] = Download(record: record.droppingUnsafeGrant(limits: grantLimits), machine: machine)
        }
        for content in snapshot.installed { installed[content.productID] = content }
        // A finished download's figures are its installed content's: its own may be gone with its grant.
        for download in downloads.values where download.state == .finished {
            guard let content = installed[download.productID] else { continue }
            downloads[download.id]?.finish(with: content)
        }
    }

    /// The journal's content now. Damaged content stays in it as installed: a relaunch finds it damaged again, and
    /// its next download still copies what is left.
    var journalSnapshot: JournalSnapshot {
        JournalSnapshot(
            nextSequence: nextSequence, downloads: ordered.map(\.record),
            installed: installed.merging(damaged) { intact, _ in intact }.values.sorted { $0.productID < $1.productID })
    }

    /// Every download in queue order.
    var ordered: [Download] { downloads.values.sorted { $0.record.sequence < $1.record.sequence } }

    /// The product's latest download.
    func live(for productID: String) -> Download? {
        downloads.values.filter { $0.productID == productID }.max { $0.record.sequence < $1.record.sequence }
    }

    /// What a caller waiting for a product's content gets now.
    enum InstallWait: Sendable, Equatable {
        /// The content is installed: return it.
        case installed(InstalledContent)
        /// Nothing more happens without the app: end the wait with this error.
        case fail(KioskError)
        /// The download is on its way (waiting, running, retrying, verifying, or paused by the user): wait.
        case wait
    }

    /// What ``KioskClient/waitUntilInstalled(productID:)`` and ``KioskClient/ensureInstalled(productID:proof:priority:)``
    /// do for the product now. The product's latest download decides: finished → its content; failed → its error;
    /// cancelled → ``KioskError/cancelled(productID:)``; paused for storage →
    /// ``KioskError/insufficientStorage(needed:available:)`` (the download stays paused and resumable); paused by the
    /// user, or on its way → wait. Without a download: the installed content, or ``KioskError/notFound(productID:)``.
    func installWait(for productID: String) -> InstallWait {
        guard let download = live(for: productID) else {
            return installed[productID].map(InstallWait.installed) ?? .fail(.notFound(productID: productID))
        }
        switch download.state {
        case .finished: return installed[productID].map(InstallWait.installed) ?? .fail(.notFound(productID: productID))
        case .failed(let error): return .fail(error)
        case .cancelled: return .fail(.cancelled(productID: productID))
        case .paused(.insufficientStorage):
            return download.snapshot.error.map(InstallWait.fail) ?? .wait
        case .waiting, .active, .paused(.user), .waitingToRetry, .waitingForNetwork, .verifying: return .wait
        }
    }

    /// The product's state now: its latest download unless finished, else its installed content, else
    /// ``ProductState/notQueued``.
    func state(of productID: String) -> ProductState {
        if let download = live(for: productID), download.state != .finished {
            return ProductState(download: download.snapshot)
        }
        return installed[productID].map(ProductState.installed) ?? .notQueued
    }

    // MARK: - Events from the app

    /// Enqueues a product. A live download of it takes the new proof and priority and is resumed; after a cancel,
    /// once installed, or when there is none, a new download starts (older records of the product are forgotten).
    /// With `installedIsCurrent` (the client's catalog serves the installed version), installed content with no
    /// download on its way needs nothing: its finished download answers, or a finished record of it when none is
    /// left, and no grant is asked for.
    mutating func enqueue(
        productID: String, proof: PurchaseProof, priority: DownloadPriority, keepingPrevious: Bool = false,
        installedIsCurrent: Bool = false, now: Date
    ) -> (DownloadID, [Action]) {
        if installedIsCurrent, let content = installed[productID] {
            let existing = live(for: productID)
            if let existing, existing.state == .finished { return (existing.id, []) }
            if existing == nil || existing.map({ Self.startsOver($0.state) }) == true {
                return recordInstalled(content, proof: proof, priority: priority, now: now)
            }
        }
        if var existing = live(for: productID), !Self.startsOver(existing.state) {
            existing.update(proof: proof, priority: priority)
            let keeps = keepingPrevious && !existing.keepsPrevious
            if keeps { existing.keepPrevious() }
            downloads[existing.id] = existing
            let record = existing.record
            var entries: [JournalEntry] = [
                .proof(
                    id: existing.id, receipt: record.receipt, signedTransaction: record.signedTransaction,
                    priority: priority)
            ]
            if keeps { entries.append(.keepsPrevious(id: existing.id)) }
            var actions: [Action] = [.journal(entries, synchronize: false)]
            actions += transition(existing.id, requestedByUser: true) { $0.resume() }
            return (existing.id, actions)
        }
        var actions: [Action] = []
        for download in downloads.values where download.productID == productID { actions += forget(download.id) }
        let id = DownloadID()
        var record = DownloadRecord(
            id: id, productID: productID, receipt: nil, signedTransaction: nil, priority: priority,
            sequence: nextSequence, state: .waiting, attempt: 0, grant: nil, entityTags: [:], verifiedPaths: [],
            integrityFailures: [:], createdAt: now)
        record.proof = proof
        if keepingPrevious { record.keepsPrevious = true }
        nextSequence += 1
        let download = Download(
            record: record, machine: DownloadStateMachine(maximumAttempts: retryPolicy.maximumAttempts))
        downloads[id] = download
        actions += [.journal([.created(download.record)], synchronize: false), .emit(.stateChanged(download.snapshot))]
        actions += schedule()
        return (id, actions)
    }

    /// A finished download of installed content that no download installed in this journal (after a journal rebuilt
    /// from the disk, or a cancelled update): it stands for the content, as the download that installed it would.
    private mutating func recordInstalled(
        _ content: InstalledContent, proof: PurchaseProof, priority: DownloadPriority, now: Date
    ) -> (DownloadID, [Action]) {
        var actions: [Action] = []
        for download in downloads.values where download.productID == content.productID {
            actions += forget(download.id)
        }
        let id = DownloadID()
        var record = DownloadRecord(
            id: id, productID: content.productID, receipt: nil, signedTransaction: nil, priority: priority,
            sequence: nextSequence, state: .finished, attempt: 0, grant: nil, entityTags: [:], verifiedPaths: [],
            integrityFailures: [:], createdAt: now)
        record.proof = proof
        nextSequence += 1
        var download = Download(
            record: record,
            machine: DownloadStateMachine(state: .finished, maximumAttempts: retryPolicy.maximumAttempts))
        download.finish(with: content)
        downloads[id] = download
        return (id, actions + [.journal([.created(download.record)], synchronize: false)])
    }

    /// Pauses a download: its transfer stops, its bytes stay. A download being verified, or one that has ended,
    /// stays as it is.
    mutating func pause(_ id: DownloadID, reason: PauseReason) -> [Action] {
        transition(id, requestedByUser: true) { $0.pause(reason) }
    }

    /// Resumes a paused or failed download, or one waiting for the network (at once: its probe is disarmed). A
    /// download on its way, or one that has ended, stays as it is.
    mutating func resume(_ id: DownloadID) -> [Action] {
        transition(id, requestedByUser: true) { $0.resume() }
    }

    /// Cancels a download: its transfer stops, then its bytes and its grant are dropped and its waiters told. A
    /// finished or cancelled download stays as it is.
    mutating func cancel(_ id: DownloadID) -> [Action] {
        transition(id, requestedByUser: true) { $0.cancel() }
    }

    /// Forgets a failed or cancelled download and deletes what it left; `nil` for any other state.
    mutating func dismiss(_ id: DownloadID) -> [Action]? {
        guard let download = downloads[id] else { return nil }
        switch download.state {
        case .failed, .cancelled: return forget(id) + [.deleteStaging(productID: download.productID)]
        default: return nil
        }
    }

    /// The retry timer of a download fired. A timer that fired as its download moved on (its disarm came too late)
    /// changes nothing.
    mutating func retryDue(_ id: DownloadID) -> [Action] {
        guard case .waitingToRetry? = downloads[id]?.state else { return [] }
        return transition(id) { $0.retryDue() }
    }

    /// A download's probe of the server ended. Reachable: every download waiting for the network goes on (the
    /// server is the same for all of them), and their other probes are disarmed. Unreachable: this download probes
    /// again later.
    mutating func networkProbed(_ id: DownloadID, reachable: Bool, now: Date) -> [Action] {
        guard downloads[id]?.state == .waitingForNetwork else { return [] }  // a probe that ended too late
        guard reachable else {
            let policy = retryPolicy
            return transition(id) { $0.networkUnreachable(now: now, policy: policy) }
        }
        var actions: [Action] = []
        for download in ordered where download.state == .waitingForNetwork {
            actions += transition(download.id) { $0.networkReachable() }
        }
        // One offer of the slots, after every download's entries: an offer between them would start a download
        // whose own "waiting" entry comes after.
        actions.removeAll { if case .schedule = $0 { true } else { false } }
        return actions + [.schedule]
    }

    /// Starts waiting downloads while the queue has free slots.
    mutating func schedule() -> [Action] {
        var activeCount = 0
        var waiting: [DownloadQueue.Entry] = []
        for download in downloads.values {
            switch download.state {
            case .active, .verifying: activeCount += 1
            case .waiting:
                waiting.append(
                    .init(id: download.id, priority: download.record.priority, sequence: download.record.sequence))
            default: break
            }
        }
        var actions: [Action] = []
        for id in queue.toStart(waiting: waiting, activeCount: activeCount) {
            actions += transition(id) { $0.start() }
        }
        return actions
    }

    // MARK: - Events from the transfer

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
    private mutating func madeProgress(_ id: DownloadID) -> [Action] {
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
            actions = []  // stopped by close(): nothing changes
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
    /// moved into place after a cancel is deleted: the app does not want it.
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
            return actions + transition(id) { $0.installed() } + [.schedule]
        }
    }

    // MARK: - Installed content

    /// Installed content whose files vanished: not installed any more, and its finished downloads are forgotten.
    /// Content in `partial` still has some of its files: it is kept as ``damaged`` for the next download to copy
    /// from; the rest is forgotten by the journal too.
    mutating func contentVanished(_ vanished: [InstalledContent], partial: Set<String>) -> [Action] {
        var actions: [Action] = []
        for content in vanished {
            installed[content.productID] = nil
            if partial.contains(content.productID) {
                damaged[content.productID] = content
            } else {
                damaged[content.productID] = nil
                actions.append(.journal([.removed(productID: content.productID)], synchronize: false))
            }
            for download in downloads.values where download.productID == content.productID {
                if case .finished = download.state { actions += forget(download.id) }
            }
            actions.append(.emit(.removed(productID: content.productID, version: content.version)))
        }
        return actions
    }

    /// The app removed a product's content (or what is left of it, when ``damaged``): it and its finished downloads
    /// are forgotten.
    mutating func removeContent(of productID: String) -> (InstalledContent, [Action])? {
        guard let content = installed.removeValue(forKey: productID) ?? damaged.removeValue(forKey: productID) else {
            return nil
        }
        var actions: [Action] = [.deleteContent(content), .forgetMarker(productID: productID)]
        for download in downloads.values where download.productID == productID && download.state == .finished {
            actions += forget(download.id)
        }
        actions += [
            .journal([.removed(productID: productID)], synchronize: true),
            .emit(.removed(productID: productID, version: content.version)),
        ]
        return (content, actions)
    }

    /// Installed content now lives elsewhere (moved out of the caches).
    mutating func contentMoved(_ content: InstalledContent) -> [Action] {
        installed[content.productID] = content
        return [.recordMarker(content), .journal([.installed(content)], synchronize: true)]
    }

    // MARK: - Internals

    /// Whether enqueueing a product whose download is in `state` starts a new download rather than resuming it:
    /// after a cancel, and once installed (a newer version may exist).
    private static func startsOver(_ state: DownloadState) -> Bool {
        switch state {
        case .cancelled, .finished: true
        default: false
        }
    }

    /// Sends one event to a download's machine, keeps the result and returns what follows. `requestedByUser`: the
    /// app's call, which may not apply in the download's state (then nothing changes); an internal event the
    /// machine rejects is a bug.
    private mutating func transition(
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
    private mutating func committed(_ id: DownloadID, previous: DownloadStateMachine) -> [Action] {
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
    private mutating func perform(
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
    private func work(of download: Download) -> DownloadWork {
        var work = download.work
        work.installed = installed[download.productID] ?? damaged[download.productID]
        return work
    }

    /// Drops a download from memory and from the journal.
    private mutating func forget(_ id: DownloadID) -> [Action] {
        guard downloads.removeValue(forKey: id) != nil else { return [] }
        return [.journal([.forgotten(id: id)], synchronize: false)]
    }
}
