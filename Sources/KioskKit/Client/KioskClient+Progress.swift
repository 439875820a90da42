import Foundation

/// A Foundation `Progress` per download, for apps that show `ProgressView(progress)`, compose progress trees
/// (`addChild(_:withPendingUnitCount:)`) or hand a `ProgressReporting` to the system.
extension KioskClient {
    /// The Foundation `Progress` of the product's download on its way (any state but finished, failed or cancelled);
    /// `nil` when the product has none (not queued, installed, failed, cancelled) or the client is closed. Every call
    /// for the same download returns the same object.
    ///
    /// - `totalUnitCount` is the version's total size in bytes (0, indeterminate, until the grant is known) and
    ///   `completedUnitCount` the bytes on disk as ``DownloadProgress/bytesWritten`` counts them; both follow
    ///   ``stateUpdates(for:)`` (no polling), so they move as often as its progress (about ten times a second).
    /// - Installed: `completedUnitCount` reaches `totalUnitCount` and the progress is finished. Cancelled (by
    ///   ``cancel(_:)-(String)`` or another way): the progress is cancelled. Failed, or the client closed: it stops
    ///   moving (the state stream has the error). A pause does not pause it (it is not pausable: use
    ///   ``pause(_:)-(DownloadID)``).
    /// - `cancel()` on it cancels this download (``cancel(_:)-(DownloadID)``, so never a newer download of the
    ///   product).
    /// - Threading: it is updated from a task of the concurrency pool, never on the main thread, so its KVO
    ///   notifications arrive there too; an observer that updates UI hops to the main actor (or binds to
    ///   ``ProductStatusStore`` instead). Its cancellation handler runs where Foundation calls it and only starts the
    ///   cancel.
    public func progress(for productID: String) -> Progress? {
        download(for: productID).flatMap(progress(of:))
    }

    /// The Foundation `Progress` of the download `id` names, as ``progress(for:)-(String)``; `nil` once it is
    /// finished, failed, cancelled, dismissed or replaced, or the client is closed.
    public func progress(for id: DownloadID) -> Progress? {
        download(for: id).flatMap(progress(of:))
    }

    /// The download's `Progress`, made and followed on first use; `nil` for a download at its end or a closed client.
    private func progress(of download: DownloadSnapshot) -> Progress? {
        guard !download.state.isTerminal, (try? ensureOpen()) != nil else { return nil }
        if let progress = progressReporters.progress(of: download.id) { return progress }
        let progress = Progress(totalUnitCount: download.progress.bytesExpected)
        progress.completedUnitCount = download.progress.bytesWritten
        progress.isCancellable = true
        progress.isPausable = false
        let id = download.id
        progress.cancellationHandler = { [weak self] in
            guard let client = self else { return }
            Task { try? await client.cancel(id) }
        }
        progressReporters.add(progress, for: id)
        // Taken on the client now: no change falls between the snapshot above and the stream.
        let updates = stateUpdates(for: download.productID)
        Task { [progressReporters] in
            for await state in updates { ProgressReporters.apply(state, of: id, to: progress) }
            progressReporters.remove(id)
        }
        return progress
    }
}

/// The `Progress` of each download that ``KioskClient/progress(for:)-(String)`` handed out, while its state
/// stream runs (one per download on its way, so bounded by the downloads).
final class ProgressReporters: Sendable {
    private let progresses = Locked<[DownloadID: Progress]>([:])

    /// The download's `Progress`, if one is followed.
    func progress(of id: DownloadID) -> Progress? { progresses.withLock { $0[id] } }

    /// Follows `progress` for the download.
    func add(_ progress: Progress, for id: DownloadID) { progresses.withLock { $0[id] = progress } }

    /// Stops following the download's `Progress` (its state stream ended).
    func remove(_ id: DownloadID) { progresses.withLock { $0[id] = nil } }

    /// Brings `progress` up to date with a state of its product: the bytes of download `id`, finished once
    /// installed, cancelled once the download is.
    static func apply(_ state: ProductState, of id: DownloadID, to progress: Progress) {
        switch state {
        case .installed(let content):
            // A product without bytes still ends finished (a progress of 0 units never is).
            let total = max(1, content.totalLength)
            progress.totalUnitCount = total
            progress.completedUnitCount = total
        case .downloading(let snapshot), .paused(let snapshot, _), .failed(let snapshot, _),
            .cancelled(let snapshot):
            // Another download's state is not this progress's.
            guard snapshot.id == id else { return }
            progress.totalUnitCount = snapshot.progress.bytesExpected
            progress.completedUnitCount = snapshot.progress.bytesWritten
            if case .cancelled = state {
                // Cancelled already: the handler would only ask for the cancel again.
                progress.cancellationHandler = nil
                progress.cancel()
            }
        case .notQueued, .outOfDate:
            // A removal of the installed version while this download goes on.
            break
        }
    }
}
