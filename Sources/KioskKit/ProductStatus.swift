import Foundation

/// What an app shows for one product, the element of ``KioskClient/statusUpdates(for:)``: bind a view to it as to
/// AssetPackManager's status.
public enum ProductStatus: Sendable, Hashable {
    /// Neither queued nor installed: offer to download it.
    case notQueued
    /// A download of the product, in any state but `finished`: waiting, active, paused (its
    /// ``DownloadSnapshot/error`` says why a storage pause happened), retrying, verifying, failed or cancelled.
    case downloading(DownloadSnapshot)
    /// The content is installed and verified.
    case installed(InstalledContent)
    /// The content is installed, but the server serves another version: `available`, its `content_version` in the
    /// catalog this client last fetched (as ``KioskClient/availableUpdates()`` reports it). Enqueue the product to
    /// fetch that version (``KioskClient/ensureInstalled(productID:proof:priority:)`` returns the installed content
    /// as it is); the installed version stays until the new one is verified.
    ///
    /// Only the first element of a status stream can be `outOfDate`, when the catalog learnt of the other version
    /// after the content was installed (content installed since, by a grant for the version served then, is
    /// ``installed(_:)``). Like ``installed(_:)``, it is final.
    case outOfDate(installed: InstalledContent, available: String)

    /// Whether nothing follows on a status stream: the content is installed (up to date or not), or the download
    /// failed or was cancelled.
    public var isFinal: Bool {
        switch self {
        case .notQueued: false
        case .installed, .outOfDate: true
        case .downloading(let snapshot):
            switch snapshot.state {
            case .failed, .cancelled, .finished: true
            default: false
            }
        }
    }

    /// What an event means for the status of its product (``KioskEvent/productID``): the new status, and whether
    /// it is progress only (a run of progress may be coalesced to its latest); `nil` when it says nothing new (a
    /// `finished` state change: the ``KioskEvent/installed(_:)`` event follows).
    static func after(_ event: KioskEvent) -> (status: ProductStatus, isProgress: Bool)? {
        switch event {
        case .stateChanged(let snapshot): snapshot.state == .finished ? nil : (.downloading(snapshot), false)
        case .progress(let snapshot): (.downloading(snapshot), true)
        case .installed(let content): (.installed(content), false)
        case .removed: (.notQueued, false)
        }
    }
}
