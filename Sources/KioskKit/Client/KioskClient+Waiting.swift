import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension KioskClient {
    /// Returns once the product's content is installed, for the deliver-before-finish pattern: finish the store
    /// transaction only after this returns.
    ///
    /// Returns at once when the content is already installed. Waits through retries and through a pause by the user
    /// (``pause(_:)-(String)``; the wait goes on after ``resume(_:)-(String)``).
    /// - Throws: the download's error if it fails; ``KioskError/insufficientStorage(needed:available:)`` when the
    ///   download is (or gets) paused because the disk is full: the download stays paused with its bytes, and
    ///   ``resume(_:)-(String)`` or ``enqueue(productID:proof:priority:)`` goes on once space is freed;
    ///   ``KioskError/cancelled(productID:)`` if it is cancelled; ``KioskError/notFound(productID:)`` if the product
    ///   is neither installed nor queued; ``KioskError/clientClosed`` when the client is or gets closed; and
    ///   ``KioskError/waitCancelled(productID:)`` at once when the calling task is cancelled (the download goes on),
    ///   as ``ensureInstalled(productID:proof:priority:)`` and ``update(productID:proof:priority:keepingPrevious:)``
    ///   do.
    public func waitUntilInstalled(productID: String) async throws -> InstalledContent {
        try ensureOpen()
        reconcileInstalled()
        return try await awaitInstall(of: productID)
    }

    /// Makes sure a product's content is installed, like `NSBundleResourceRequest` and AssetPackManager's
    /// `ensureLocalAvailability(of:)`: returns the installed content at once when the product is installed (checked
    /// against the disk), otherwise enqueues it as ``enqueue(productID:proof:priority:)`` does (a running download
    /// is joined, a paused or failed one resumed with `proof`, a cancelled one started over) and waits until it is
    /// installed. Finish the store transaction only after this returns.
    ///
    /// Outcomes while it waits:
    /// - a pause by the user (``pause(_:)-(String)``): it keeps waiting; ``resume(_:)-(String)`` goes on;
    /// - a full disk: throws ``KioskError/insufficientStorage(needed:available:)``; the download stays paused with
    ///   its bytes, and a later ``resume(_:)-(String)`` or another call of this method goes on;
    /// - the download fails: throws its error;
    /// - ``cancel(_:)-(String)``: throws ``KioskError/cancelled(productID:)``;
    /// - ``dismiss(productID:)`` and ``remove(_:)``: neither touches a download on its way (they throw
    ///   ``KioskError/downloadInProgress(productID:)``), so the call goes on;
    /// - ``close()``: throws ``KioskError/clientClosed``;
    /// - the calling task is cancelled: throws ``KioskError/waitCancelled(productID:)`` at once and leaves the
    ///   download running (``KioskError/cancelled(productID:)`` is for a download that ``cancel(_:)-(String)``
    ///   stopped);
    /// - two calls for one product share one download and return the same content.
    /// - Throws: the outcomes above, and what ``enqueue(productID:proof:priority:)`` throws for invalid arguments.
    public func ensureInstalled(productID: String, proof: PurchaseProof, priority: DownloadPriority = .normal)
        async throws(KioskError) -> InstalledContent
    {
        try ensureOpen()
        reconcileInstalled()
        if let content = coordinator.installed[productID] { return content }
        try enqueue(productID: productID, proof: proof, priority: priority)
        return try await awaitInstall(of: productID)
    }

    /// Brings an installed product to the version the server serves now, and returns the installed content (the same
    /// content when it is current already). Like ``enqueue(productID:proof:priority:)`` of an installed product, it
    /// asks for a grant; when the grant names another version, that version is built from the installed one first:
    /// files whose SHA-256 is unchanged (under any path) are copied or cloned, the chunks of changed files found in
    /// the installed files are copied, and only the rest is fetched (``DownloadProgress/bytesReused`` and
    /// ``DownloadProgress/bytesFetched`` tell which). The installed version stays in place and usable until the new
    /// one is installed, then it is deleted; with `keepingPrevious`, it is moved instead to
    /// `Kept/<product_id>/<version>/` under the cache root, found with ``keptVersions(of:)`` and deleted with
    /// ``removeKeptVersion(_:)`` (the request holds for the rest of this download, across relaunches, whoever
    /// enqueues the product meanwhile). A product not installed is downloaded whole, as by
    /// ``ensureInstalled(productID:proof:priority:)``.
    ///
    /// Outcomes while it waits are those of ``ensureInstalled(productID:proof:priority:)``; a full disk throws
    /// ``KioskError/insufficientStorage(needed:available:)`` with the installed version intact. Use
    /// ``availableUpdates()`` to learn which products have a new version without asking for grants.
    public func update(
        productID: String, proof: PurchaseProof, priority: DownloadPriority = .normal, keepingPrevious: Bool = false
    ) async throws(KioskError) -> InstalledContent {
        try enqueue(
            productID: productID, proof: proof, priority: priority, keepingPrevious: keepingPrevious,
            askingTheServer: true)
        return try await awaitInstall(of: productID)
    }

    /// The product's content once installed; throws what ends the wait first (see
    /// ``DownloadCoordinator/installWait(for:)``), ``KioskError/waitCancelled(productID:)`` when the calling task
    /// is cancelled.
    func awaitInstall(of productID: String) async throws(KioskError) -> InstalledContent {
        switch await waitForInstall(of: productID) {
        case .some(.success(let content)): return content
        case .some(.failure(let error)): throw error
        case .none: throw .waitCancelled(productID: productID)
        }
    }

    /// Waits until the product is installed or nothing more happens without the app (see
    /// ``DownloadCoordinator/installWait(for:)``); `nil` when the calling task is cancelled.
    private func waitForInstall(of productID: String) async -> Result<InstalledContent, KioskError>? {
        switch coordinator.installWait(for: productID) {
        case .installed(let content): return .success(content)
        case .fail(let error): return .failure(error)
        case .wait: break
        }
        guard !Task.isCancelled else { return nil }
        nextWaiterID += 1
        let id = nextWaiterID
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                installWaiters[productID, default: []].append(InstallWaiter(id: id, continuation: continuation))
            }
        } onCancel: {
            // Runs on the actor after the waiter is registered (the registration does not suspend).
            Task { await self.stopWaiting(id, for: productID) }
        }
    }

    /// Ends the wait of a call whose task was cancelled.
    func stopWaiting(_ id: UInt64, for productID: String) {
        guard let index = installWaiters[productID]?.firstIndex(where: { $0.id == id }) else { return }
        installWaiters[productID]?.remove(at: index).continuation.resume(returning: nil)
    }
}

/// A caller of ``KioskClient/waitUntilInstalled(productID:)`` or
/// ``KioskClient/ensureInstalled(productID:proof:priority:)``, waiting for the outcome (`nil`: its task was
/// cancelled); its ID lets a cancelled call end its own wait alone.
struct InstallWaiter {
    let id: UInt64
    let continuation: CheckedContinuation<Result<InstalledContent, KioskError>?, Never>
}
