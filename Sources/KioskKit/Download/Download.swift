import Foundation
import KioskCore

/// One download, everything the client knows about it in one value: the journaled record (grant, files, proof),
/// the lifecycle, the progress and the retry and speed bookkeeping. Only the ``DownloadCoordinator`` changes it.
struct Download: Sendable {
    /// The journaled fields; its `state` and `attempt` are the machine's (see ``record``).
    private var stored: DownloadRecord
    /// The lifecycle (state and attempt count).
    var machine: DownloadStateMachine
    /// Bytes, speed and time remaining.
    var progress: DownloadProgress
    /// The speed of the running transfer.
    var estimator = SpeedEstimator()
    /// When the last progress event was sent (progress events are throttled).
    var lastProgressEvent: ContinuousClock.Instant?
    /// The instant of the last progress sample applied (a sample that arrives late is dropped).
    var lastProgressSample: ContinuousClock.Instant?
    /// The ``KioskError/insufficientStorage(needed:available:)`` that paused the download, while it is paused for
    /// storage (not journaled: after a relaunch ``DownloadSnapshot/error`` falls back to the bytes still to fetch).
    var storageError: KioskError?

    init(record: DownloadRecord, machine: DownloadStateMachine) {
        stored = record
        self.machine = machine
        progress = DownloadProgress(
            bytesWritten: record.verifiedLength, bytesExpected: record.grant?.totalLength ?? 0,
            bytesReused: record.reusedLength)
    }

    /// The record as the journal keeps it, with the machine's state and attempt count.
    var record: DownloadRecord {
        var record = stored
        record.state = machine.state
        record.attempt = machine.attempt
        return record
    }

    var id: DownloadID { stored.id }
    var productID: String { stored.productID }
    var state: DownloadState { machine.state }

    /// Applies a change of the grant or of the files, and keeps the reused bytes of the progress up to date (O(1)
    /// but for a grant change).
    mutating func apply(_ change: DownloadChange) {
        guard let path = change.path else {
            stored.apply(change)
            progress.bytesReused = stored.reusedLength
            return
        }
        let before = stored.reusedBytes[path] ?? 0
        stored.apply(change)
        progress.bytesReused += (stored.reusedBytes[path] ?? 0) - before
    }

    /// Applies a checkpoint of the engine: its changes, a verified file or chunk counted by the machine, and the size
    /// the grant gives.
    mutating func apply(checkpoint changes: [DownloadChange]) {
        for change in changes {
            apply(change)
            switch change {
            case .verified, .chunkVerified: machine.verified()
            default: break
            }
        }
        if let total = stored.grant?.totalLength { progress.bytesExpected = total }
    }

    /// The figures of a download that installed `content`: all of its bytes written.
    mutating func finish(with content: InstalledContent) {
        progress.bytesWritten = content.totalLength
        progress.bytesExpected = content.totalLength
    }

    /// Takes a new proof of purchase and priority (the product was enqueued again).
    mutating func update(proof: PurchaseProof, priority: DownloadPriority) {
        stored.proof = proof
        stored.priority = priority
    }

    /// Keeps the installed version when this download installs another one.
    mutating func keepPrevious() { stored.keepsPrevious = true }

    /// Whether the installed version is kept when this download installs another one.
    var keepsPrevious: Bool { stored.keepsPrevious == true }

    /// What the engine starts from.
    var work: DownloadWork {
        DownloadWork(
            productID: stored.productID, proof: stored.proof, grant: stored.grant,
            grantReceivedAt: stored.grantReceivedAt, entityTags: stored.entityTags,
            verifiedPaths: stored.verifiedPaths, integrityFailures: stored.integrityFailures,
            verifiedChunks: stored.verifiedChunks, reusedBytes: stored.reusedBytes,
            chunkPrefixes: stored.chunkPrefixes)
    }

    /// The download as the app sees it.
    var snapshot: DownloadSnapshot {
        DownloadSnapshot(
            id: stored.id, productID: stored.productID, version: stored.grant?.contentVersion, state: machine.state,
            progress: progress, priority: stored.priority, createdAt: stored.createdAt, storagePauseError: storageError)
    }

    /// Whether the download is stopped: it is not running and will not run without a call from the app.
    var isStopped: Bool {
        switch machine.state {
        case .failed, .cancelled, .paused, .finished: true
        default: false
        }
    }
}
