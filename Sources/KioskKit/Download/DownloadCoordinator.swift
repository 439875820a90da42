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
    // The state below is changed only by the coordinator's own methods (here and in its extensions).
    var downloads: [DownloadID: Download] = [:]
    /// Installed content by product ID.
    var installed: [String: InstalledContent] = [:]
    /// Installed content that lost some of its files (a purge of Caches), by product ID: not installed any more, but
    /// what is left is copied by the product's next download, which fetches only the rest. The journal keeps it as
    /// installed, so a relaunch finds it damaged again.
    var damaged: [String: InstalledContent] = [:]
    var nextSequence: UInt64
    let queue: DownloadQueue
    let retryPolicy: RetryPolicy
    let progressInterval: Duration

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

}
