import Foundation
import KioskCore

extension DownloadCoordinator {
    /// A side effect for the executor, carried out in the order returned.
    enum Action: Sendable {
        /// Append entries to the journal; with `synchronize`, wait until they are durable before going on.
        case journal([JournalEntry], synchronize: Bool)
        /// Start the engine on the download (a task that reports back with the engine's hooks).
        case startTransfer(DownloadID, DownloadWork)
        /// Start the engine on the download as for ``startTransfer(_:_:)``, asking for a new grant first.
        case renewGrant(DownloadID, DownloadWork)
        /// Move the download's staged content into place (a task that reports back with
        /// ``DownloadCoordinator/installEnded(_:_:)``).
        case install(DownloadID, productID: String, grant: Grant)
        /// Cancel the download's task (a transfer or an install), if any, and wait until it has ended.
        case stopTransfer(DownloadID)
        /// Arm (replacing any) the download's timer: it calls ``DownloadCoordinator/retryDue(_:)`` at the date.
        case armRetry(DownloadID, at: Date)
        /// Arm (replacing any) the download's timer: at the date it asks the server whether it is reachable and
        /// calls ``DownloadCoordinator/networkProbed(_:reachable:now:)`` with the answer.
        case armProbe(DownloadID, at: Date)
        /// Disarm the download's timer (a retry or a probe), if any.
        case disarmTimer(DownloadID)
        /// Send an event to the app's streams and observers.
        case emit(KioskEvent)
        /// End every ``KioskClient/waitUntilInstalled(productID:)`` call waiting for the product.
        case finishWaiters(productID: String, Result<InstalledContent, KioskError>)
        /// Delete the product's staging folder (the bytes of its download).
        case deleteStaging(productID: String)
        /// Delete installed content's folder (never content moved out of the caches).
        case deleteContent(InstalledContent)
        /// Move the previous version's folder to ``CacheLayout/kept(productID:version:)`` (content moved out of the
        /// caches stays where it is).
        case keepContent(InstalledContent)
        /// Record the installed content's marker (what the reconciler checks).
        case recordMarker(InstalledContent)
        /// Forget the product's marker.
        case forgetMarker(productID: String)
        /// Tell the server, in the background, that the product version was installed
        /// (``KioskClient/reportDelivery(_:)``).
        case reportDelivery(DeliveryReport)
        /// Offer free slots of the queue now (``DownloadCoordinator/schedule()``); after a stop, once it has ended.
        case schedule
    }
}
