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

    /// Whether nothing follows on a status stream: the content is installed, or the download failed or was
    /// cancelled.
    public var isFinal: Bool {
        switch self {
        case .notQueued: false
        case .installed: true
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
