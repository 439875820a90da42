import Foundation
import KioskCore

/// How a transfer that did not fail ended, for the ``DownloadCoordinator`` to act on
/// (``DownloadCoordinator/transferEnded(_:_:now:)``). A failure is thrown instead, typed.
enum TransferOutcome: Sendable {
    /// Every file of the grant is verified in staging, and the journal says so durably: the content is ready to be
    /// moved into place (``DownloadStateMachine/Action/verifyAndInstall``). The grant is the one the transfer's
    /// checkpoints gave the download.
    case staged
    /// The installed content already holds the grant's version, intact: nothing was fetched and nothing moves.
    case alreadyInstalled(InstalledContent)
    /// The transfer stopped for a new grant (the files in flight finished first; their bytes are kept). The machine
    /// decides whether to renew it (``DownloadStateMachine/grantNeeded(_:now:policy:random:)``).
    case needsNewGrant(GrantNeed)
}
