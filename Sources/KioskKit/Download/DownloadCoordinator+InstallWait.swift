import Foundation
import KioskCore

/// What callers waiting for a product are told, and the product's state.
extension DownloadCoordinator {

    /// What a caller waiting for a product's content gets now.
    enum InstallWait: Sendable, Equatable {
        /// The content is installed: return it.
        case installed(InstalledContent)
        /// Nothing more happens without the app: end the wait with this error.
        case fail(KioskError)
        /// The download is on its way (waiting, running, retrying, verifying, or paused by the user): wait.
        case wait
    }

    /// What ``KioskClient/waitUntilInstalled(productID:)`` and
    /// ``KioskClient/ensureInstalled(productID:proof:priority:)`` do for the product now. The product's latest download decides: finished → its content; failed → its error;
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
}
