import Foundation

/// The calls that act on or read one download, by ``DownloadID``.
///
/// A ``DownloadID`` names one download of a product: the one ``KioskClient/enqueue(productID:proof:priority:)``
/// started (it returns the ID of the download it started or joined), until it is dismissed or replaced by a new
/// download of the product (an enqueue after a cancel, or after the install). Every call that acts on or reads a
/// product's download has a form that takes the ID instead of the product; that form acts only on that download, so a
/// stale ID (kept by a view, or by a `Progress` after the download was cancelled and the product enqueued again) never
/// reaches the product's newer download: it throws ``KioskError/invalidArgument(_:)`` instead. Calls about the
/// product's content rather than one download (``KioskClient/stateUpdates(for:)``,
/// ``KioskClient/waitUntilInstalled(productID:)``, ``KioskClient/remove(_:)``, ``KioskClient/installedContent(for:)``)
/// take the product only.
extension KioskClient {
    /// The download `id` names, in its state now; `nil` once it was dismissed or replaced by a newer download of its
    /// product (after ``close()``: the last known state).
    public func download(for id: DownloadID) -> DownloadSnapshot? {
        downloads.first { $0.id == id }
    }

    /// Pauses the download `id` names, as ``pause(_:)-(String)`` does for its product.
    /// - Throws: ``KioskError/invalidArgument(_:)`` when `id` names no download the client knows (dismissed, or
    ///   replaced by a newer download of the product), ``KioskError/clientClosed`` after ``close()``.
    public func pause(_ id: DownloadID) async throws(KioskError) {
        try await pause(try productID(of: id))
    }

    /// Resumes the download `id` names, as ``resume(_:)-(String)`` does for its product.
    /// - Throws: what ``resume(_:)-(String)`` throws, and ``KioskError/invalidArgument(_:)`` when `id` names no download
    ///   the client knows.
    public func resume(_ id: DownloadID) throws(KioskError) {
        try resume(try productID(of: id))
    }

    /// Cancels the download `id` names, as ``cancel(_:)-(String)`` does for its product.
    /// - Throws: ``KioskError/invalidArgument(_:)`` when `id` names no download the client knows,
    ///   ``KioskError/clientClosed`` after ``close()``.
    public func cancel(_ id: DownloadID) async throws(KioskError) {
        try await cancel(try productID(of: id))
    }

    /// Forgets the failed or cancelled download `id` names, as ``dismiss(productID:)`` does for its product.
    /// - Throws: what ``dismiss(productID:)`` throws, and ``KioskError/invalidArgument(_:)`` when `id` names no
    ///   download the client knows.
    public func dismiss(downloadID id: DownloadID) throws(KioskError) {
        try dismiss(productID: try productID(of: id))
    }

    /// The product of the download `id` names (the client keeps one download per product, so it is that product's
    /// download).
    private func productID(of id: DownloadID) throws(KioskError) -> String {
        try ensureOpen()
        guard let download = download(for: id) else {
            throw .invalidArgument(
                "No download \(id) here: it was dismissed, or replaced by a newer download of its product.")
        }
        return download.productID
    }
}
