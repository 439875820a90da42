import Foundation

/// What an app showed for one product before ``ProductState``, which has paused, failed and cancelled cases of its
/// own: here they all arrive as ``downloading(_:)``. Kept, with ``KioskClient/statusUpdates(for:)`` and
/// ``ProductStatusStore/status(of:)``, so that code written against it builds and behaves as before.
@available(*, deprecated, message: "Use ProductState: paused, failed and cancelled downloads have cases of their own")
public enum ProductStatus: Sendable, Hashable {
    /// Neither queued nor installed: offer to download it.
    case notQueued
    /// A download of the product, in any state but `finished`: waiting, active, paused (its
    /// ``DownloadSnapshot/error`` says why a storage pause happened), retrying, verifying, failed or cancelled.
    case downloading(DownloadSnapshot)
    /// The content is installed and verified.
    case installed(InstalledContent)
    /// The content is installed, but the server serves another version (see
    /// ``ProductState/outOfDate(installed:available:)``).
    case outOfDate(installed: InstalledContent, available: String)

    /// The status that stands for `state`: every download's state is ``downloading(_:)``.
    public init(_ state: ProductState) {
        switch state {
        case .notQueued: self = .notQueued
        case .installed(let content): self = .installed(content)
        case .outOfDate(let content, let available): self = .outOfDate(installed: content, available: available)
        case .downloading(let download), .paused(let download, _), .failed(let download, _),
            .cancelled(let download):
            self = .downloading(download)
        }
    }

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
}
