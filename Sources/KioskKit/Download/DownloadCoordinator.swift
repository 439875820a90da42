import Foundation
import KioskCore

/// Owns every download and the installed content, and decides what happens to them. Each event is a mutating
/// method that returns the ``Action``s to carry out, in order; the ``KioskClient`` executes them (journal, tasks,
/// timers, events, files) and has no state of its own about downloads. No I/O and no clock in here: times come in
/// as arguments, so tests drive the coordinator with a mock executor.
struct DownloadCoordinator: Sendable {
    /// A side effect for the executor, carried out in the order returned.
    enum Action: Sendable {
        /// Append entries to the journal; with `synchronize`, wait until they are durable before going on.
        case journal([JournalEntry], synchronize: Bool)
        /// Start the engine on the download (a task that reports back with the engine's hooks).
        case startTransfer(DownloadID, DownloadWork)
        /// Start the engine on the download as for ``startTransfer(_:_:)``, asking for a new grant first.
        case renewGrant(DownloadID, DownloadWork)
        /// Cancel the download's transfer task, if any, and wait until it has ended.
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
    /// How many times the same file, or the same chunk, may fail its hash: the first failure is fetched again (a
    /// file after a new grant), the second ends the transfer with an integrity error.
    static let integrityFailuresAllowed = 2

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
            actions += transition(existing.id) { $0.resume() }
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

    /// Pauses a download (the app, or a full disk): its transfer stops, its bytes stay.
    mutating func pause(_ id: DownloadID, reason: PauseReason) -> [Action] {
        guard downloads[id] != nil else { return [] }
        return transition(id) { $0.pause(reason) } + [.disarmTimer(id), .stopTransfer(id), .schedule]
    }

    /// Resumes a paused or failed download, or one waiting for the network (at once: its probe is disarmed).
    mutating func resume(_ id: DownloadID) -> [Action] {
        let probing = downloads[id]?.state == .waitingForNetwork
        return (probing ? [.disarmTimer(id)] : []) + transition(id) { $0.resume() }
    }

    /// Cancels a download: its transfer stops, then its bytes and its grant are dropped and its waiters told.
    mutating func cancel(_ id: DownloadID) -> [Action] {
        var accepted = false
        var actions = transition(id) { machine in
            let action = machine.cancel()
            if case .stopTransferAndDeleteBytes = action { accepted = true }
            return action
        }
        guard accepted, var download = downloads[id] else { return actions }
        download.apply(.grant(nil, receivedAt: nil))
        download.progress.bytesWritten = 0
        downloads[id] = download
        actions += [
            .disarmTimer(id), .stopTransfer(id), .deleteStaging(productID: download.productID),
            .journal([.changed(id: id, .grant(nil, receivedAt: nil))], synchronize: false),
            .finishWaiters(productID: download.productID, .failure(.cancelled(productID: download.productID))),
            .schedule,
        ]
        return actions
    }

    /// Forgets a failed or cancelled download and deletes what it left; `nil` for any other state.
    mutating func dismiss(_ id: DownloadID) -> [Action]? {
        guard let download = downloads[id] else { return nil }
        switch download.state {
        case .failed, .cancelled: return forget(id) + [.deleteStaging(productID: download.productID)]
        default: return nil
        }
    }

    /// The retry timer of a download fired.
    mutating func retryDue(_ id: DownloadID) -> [Action] {
        transition(id) { $0.retryDue() }
    }

    /// A download's probe of the server ended. Reachable: every download waiting for the network goes on (the
    /// server is the same for all of them), and their other probes are disarmed. Unreachable: this download probes
    /// again later.
    mutating func networkProbed(_ id: DownloadID, reachable: Bool, now: Date) -> [Action] {
        guard reachable else {
            let policy = retryPolicy
            return transition(id) { $0.networkUnreachable(now: now, policy: policy) }
        }
        var actions: [Action] = []
        for download in ordered where download.state == .waitingForNetwork {
            actions += [.disarmTimer(download.id)] + transition(download.id) { $0.networkReachable() }
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
        return (changes.map { .changed(id: id, $0) }, madeProgress(id))
    }

    /// A file or a chunk of the running transfer failed its hash. The first failure of a file or a chunk is fetched
    /// again (``IntegrityVerdict/retry``); the second is an integrity error naming the file
    /// (``IntegrityVerdict/fail(_:)``), which the transfer ends with. A file's count is journaled (it
    /// survives a relaunch, and starts over once the file is verified, discarded or dropped by a new grant); a
    /// chunk's lasts the transfer. ``IntegrityVerdict/stop`` when the download is no longer active.
    mutating func integrityFailed(_ id: DownloadID, _ failure: IntegrityFailure) -> (IntegrityVerdict, [Action]) {
        guard var download = downloads[id], case .active = download.state else { return (.stop, []) }
        let count: Int
        var actions: [Action] = []
        if let chunk = failure.chunk {
            count = (download.chunkFailures[failure.path]?[chunk] ?? 0) + 1
            download.chunkFailures[failure.path, default: [:]][chunk] =
                count < Self.integrityFailuresAllowed ? count : nil
        } else {
            count = (download.record.integrityFailures[failure.path] ?? 0) + 1
            // The count starts over after the error: a resume gets one retry again.
            let change = DownloadChange.integrityFailures(
                path: failure.path, count: count < Self.integrityFailuresAllowed ? count : 0)
            download.apply(change)
            actions.append(.journal([.changed(id: id, change)], synchronize: false))
        }
        downloads[id] = download
        guard count >= Self.integrityFailuresAllowed else { return (.retry, actions) }
        let error = KioskError.integrity(
            productID: download.productID, path: failure.path, expectedSHA256: failure.expectedSHA256,
            actualSHA256: failure.actualSHA256)
        return (.fail(error), actions)
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

    /// Every file is here: `active` → `verifying`. Returns `false` when the download is no longer wanted.
    mutating func transferCompleted(_ id: DownloadID) -> (Bool, [Action]) {
        var accepted = false
        let actions = transition(id) { machine in
            let action = machine.transferCompleted()
            if case .verifyAndInstall = action { accepted = true }
            return action
        }
        return (accepted, actions)
    }

    /// The transfer task ended, with the installed content or an error.
    mutating func transferEnded(_ id: DownloadID, _ result: Result<InstalledContent, any Error>, now: Date) -> [Action]
    {
        guard var download = downloads[id] else { return [.schedule] }
        let before = download.machine
        var actions: [Action] = []
        switch result {
        case .success(let content):
            if case .active = download.state { _ = download.machine.transferCompleted() }
            guard case .reportInstalled = download.machine.installed() else {
                // Cancelled while the content was being moved into place: the app does not want it.
                return [.deleteContent(content), .schedule]
            }
            if let previous = installed[content.productID], previous.directory != content.directory {
                actions.append(download.keepsPrevious ? .keepContent(previous) : .deleteContent(previous))
            }
            installed[content.productID] = content
            damaged[content.productID] = nil
            download.finish(with: content)
            downloads[id] = download
            actions += [.recordMarker(content), .journal([.installed(content)], synchronize: false)]
            actions += committed(id, previous: before)
            // The app is told only once the journal says so.
            actions += [
                .journal([], synchronize: true), .emit(.installed(content)),
                .finishWaiters(productID: content.productID, .success(content)),
            ]
        case .failure(EngineSignal.needsNewGrant(let reason)):
            // The transfer stopped for a new grant: the machine renews it, or past its limit fails the transfer.
            guard case .active = download.state else { break }  // paused or cancelled meanwhile
            let action = download.machine.grantNeeded(reason.error, now: now, policy: retryPolicy)
            downloads[id] = download
            actions += committed(id, previous: before)
            actions += perform(action, for: id)
        case .failure(let error):
            guard !(error is CancellationError) else { break }
            let kioskError = (error as? KioskError) ?? .fileSystem(path: download.productID, underlying: "\(error)")
            if kioskError.apiCode == .notFound, download.record.grant == nil, case .active = download.state {
                // The server knows no such product: nothing was fetched and nothing will be. The download is
                // forgotten, not kept failed across launches, and the callers waiting for it learn why.
                let productID = download.productID
                actions += forget(id) + [
                    .deleteStaging(productID: productID), .journal([], synchronize: true),
                    .finishWaiters(productID: productID, .failure(.notFound(productID: productID))), .schedule,
                ]
                return actions
            }
            let action: DownloadStateMachine.Action
            switch download.state {
            case .verifying: action = download.machine.verificationFailed(kioskError)
            case .active: action = download.machine.transferFailed(kioskError, now: now, policy: retryPolicy)
            default: action = .none  // paused or cancelled meanwhile: the stop was intentional
            }
            let pausedForStorage = download.state == .paused(.insufficientStorage) && before.state != download.state
            if pausedForStorage { download.storageError = kioskError }
            downloads[id] = download
            actions += committed(id, previous: before)
            actions += perform(action, for: id)
            if pausedForStorage {
                // Nothing more happens without the app: the waiters learn why (the download stays resumable).
                actions.append(.finishWaiters(productID: download.productID, .failure(kioskError)))
            }
        }
        actions.append(.schedule)
        return actions
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

    /// Sends one event to a download's machine, keeps the result and returns what follows.
    private mutating func transition(
        _ id: DownloadID, _ event: (inout DownloadStateMachine) -> DownloadStateMachine.Action
    )
        -> [Action]
    {
        guard var download = downloads[id] else { return [] }
        let before = download.machine
        let action = event(&download.machine)
        downloads[id] = download
        return committed(id, previous: before) + perform(action, for: id)
    }

    /// Journals the machine's state when it changed (or its attempt count), resets the speed when the download
    /// leaves `active`, and tells the app about a new state.
    private mutating func committed(_ id: DownloadID, previous: DownloadStateMachine?) -> [Action] {
        guard var download = downloads[id] else { return [] }
        let changed = previous?.state != download.state
        var actions: [Action] = []
        if changed || previous?.attempt != download.machine.attempt {
            actions.append(
                .journal([.state(id: id, download.state, attempt: download.machine.attempt)], synchronize: false))
        }
        guard changed else { return actions }
        if download.state != .paused(.insufficientStorage) { download.storageError = nil }
        downloads[id] = download
        if download.state != .active {
            download.progress.bytesPerSecond = 0
            download.progress.timeRemaining = nil
            download.estimator = SpeedEstimator()
            downloads[id] = download
        }
        actions.append(.emit(.stateChanged(download.snapshot)))
        return actions
    }

    /// What the machine's action means for the executor.
    private mutating func perform(_ action: DownloadStateMachine.Action, for id: DownloadID) -> [Action] {
        switch action {
        case .none, .rejected, .verifyAndInstall, .reportInstalled:
            return []
        case .enqueue:
            return [.schedule]
        case .startTransfer:
            return work(for: id).map { [.startTransfer(id, $0)] } ?? []
        case .renewGrant:
            return work(for: id).map { [.renewGrant(id, $0)] } ?? []
        case .stopTransfer, .stopTransferAndDeleteBytes:
            return []  // pause and cancel stop the transfer themselves, in order with the rest of their work
        case .scheduleRetry(let date):
            return [.armRetry(id, at: date)]
        case .probeNetwork(let date):
            return [.armProbe(id, at: date)]
        case .reportFailure(let error):
            guard let download = downloads[id] else { return [] }
            return [.finishWaiters(productID: download.productID, .failure(error))]
        }
    }

    /// What a new transfer of the download starts from; its chunks' failure counts start over.
    private mutating func work(for id: DownloadID) -> DownloadWork? {
        guard var download = downloads[id] else { return nil }
        download.chunkFailures = [:]
        downloads[id] = download
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
