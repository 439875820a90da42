import Foundation

/// What an app shows for one product, the element of ``KioskClient/stateUpdates(for:)`` and
/// ``ProductStatusStore/state(of:)``: bind a view to it as to AssetPackManager's status.
///
/// ```swift
/// switch state {
/// case .notQueued: Button("Download") { … }
/// case .downloading(let download): ProgressView(value: download.progress.fraction)
/// case .paused(let download, .user): Button("Resume") { … }
/// case .paused(let download, .insufficientStorage): Text(download.error?.description ?? "Free some space")
/// case .failed(_, let error): Text(error.description)  // resume(_:) tries again from the bytes on disk
/// case .cancelled: Button("Download") { … }
/// case .installed(let content), .outOfDate(let content, _): Button("Read") { open(content.directory) }
/// }
/// ```
///
/// It replaces ``ProductStatus``, whose `downloading` case also carried paused, failed and cancelled downloads.
public enum ProductState: Sendable, Hashable {
    /// Neither queued nor installed: offer to download it.
    case notQueued
    /// A download on its way: waiting for a slot, active, waiting to retry, waiting for the network, or verifying
    /// (``DownloadSnapshot/state`` says which).
    case downloading(DownloadSnapshot)
    /// A download paused with its bytes kept, by the app or the user (`.user`: offer Resume), or because the disk is
    /// full (`.insufficientStorage`: ``DownloadSnapshot/error`` says how much to free, then resume).
    case paused(DownloadSnapshot, reason: PauseReason)
    /// A download that KioskKit stopped trying on its own: ``KioskClient/resume(_:)-(String)`` tries again from the
    /// bytes on disk (``KioskError/isTransient`` tells whether it may succeed as it is),
    /// ``KioskClient/dismiss(productID:)`` forgets it.
    case failed(DownloadSnapshot, error: KioskError)
    /// A download cancelled by ``KioskClient/cancel(_:)-(String)``; its bytes are deleted. Enqueueing starts a new one.
    case cancelled(DownloadSnapshot)
    /// The content is installed and verified.
    case installed(InstalledContent)
    /// The content is installed, but the server serves another version: `available`, its `content_version` in the
    /// catalog this client last fetched (as ``KioskClient/availableUpdates()`` reports it). Enqueue the product to
    /// fetch that version; the installed version stays until the new one is verified.
    ///
    /// Only the first element of a state stream can be `outOfDate`, when the catalog learnt of the other version
    /// after the content was installed. Like ``installed(_:)``, it is final.
    case outOfDate(installed: InstalledContent, available: String)

    /// The state of a product whose latest download is `download` (not finished: a finished download's product is
    /// ``installed(_:)``).
    init(download: DownloadSnapshot) {
        switch download.state {
        case .paused(let reason): self = .paused(download, reason: reason)
        case .failed(let error): self = .failed(download, error: error)
        case .cancelled: self = .cancelled(download)
        default: self = .downloading(download)
        }
    }

    /// The download the state is about, if any.
    public var download: DownloadSnapshot? {
        switch self {
        case .downloading(let download), .paused(let download, _), .failed(let download, _),
            .cancelled(let download):
            download
        case .notQueued, .installed, .outOfDate: nil
        }
    }

    /// Whether nothing follows on a state stream: the content is installed (up to date or not), or the download
    /// failed or was cancelled.
    public var isFinal: Bool {
        switch self {
        case .installed, .outOfDate, .failed, .cancelled: true
        case .notQueued, .downloading, .paused: false
        }
    }

    /// What an event means for the state of its product (``KioskEvent/productID``): the new state, and whether it is
    /// progress only (a run of progress may be coalesced to its latest); `nil` when it says nothing new (a
    /// `finished` state change: the ``KioskEvent/installed(_:)`` event follows).
    static func after(_ event: KioskEvent) -> (state: ProductState, isProgress: Bool)? {
        switch event {
        case .stateChanged(let snapshot): snapshot.state == .finished ? nil : (ProductState(download: snapshot), false)
        case .progress(let snapshot): (ProductState(download: snapshot), true)
        case .installed(let content): (.installed(content), false)
        case .removed: (.notQueued, false)
        }
    }
}
