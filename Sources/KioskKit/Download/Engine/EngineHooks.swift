import Crypto
import Foundation
import KioskCore

/// How the engine reports to its owner. All calls come from the download's own task.
struct EngineHooks: Sendable {
    /// The work changed in a way worth journaling (new grant, validator seen, file or chunk verified).
    /// For a verified file, `directory` is the folder its final name was created in and `file` its bytes: the
    /// journal makes both durable before the record. Returns without waiting for the disk.
    var checkpoint: @Sendable (_ changes: [DownloadChange], _ directory: URL?, _ file: UnsyncedFile?) async -> Void
    /// Returns once every checkpoint so far is durable (before the staged files are moved into place).
    var durable: @Sendable () async -> Void
    /// Bytes on disk / bytes expected, for the whole download. Called from URLSession's delegate queue and the
    /// files' tasks, at most ~20 times a second.
    var progress: @Sendable (_ written: Int64, _ expected: Int64) -> Void
    /// Every file is here: checking and moving into place begins. Returns `false` when the owner no longer
    /// wants the download to go on (paused or cancelled meanwhile).
    var verifying: @Sendable () async -> Bool
    /// A file or a chunk did not match the grant: the owner counts it and decides (see ``integrityFailed(_:)``).
    var integrityVerdict: @Sendable (_ failure: IntegrityFailure) async -> IntegrityVerdict

    /// Reports an integrity failure to the owner. Returns when the bytes are to be fetched again; throws the error
    /// to end the transfer with (``KioskError/integrity(productID:path:expectedSHA256:actualSHA256:)``), or
    /// `CancellationError` when the owner no longer wants the download.
    func integrityFailed(_ failure: IntegrityFailure) async throws {
        switch await integrityVerdict(failure) {
        case .retry: return
        case .fail(let error): throw error
        case .stop: throw CancellationError()
        }
    }
}

/// Bytes of a download that did not match the grant: a whole file, or one chunk of it.
struct IntegrityFailure: Sendable, Hashable {
    /// The file's path in the grant.
    var path: String
    /// The chunk's index in the file's chunk list, for a chunk; `nil` for the whole file.
    var chunk: Int?
    /// The SHA-256 the grant gives (of the file or of the chunk).
    var expectedSHA256: String
    /// The SHA-256 of the bytes received (empty when the server refused the range: the part was longer than the
    /// file).
    var actualSHA256: String
}

/// What the owner decided about an ``IntegrityFailure``.
enum IntegrityVerdict: Sendable, Hashable {
    /// Fetch the bytes again (after a new grant, for a whole file: it may have changed on the server).
    case retry
    /// End the transfer with this error.
    case fail(KioskError)
    /// The download is no longer wanted (paused, cancelled, or the client closed).
    case stop
}

/// Why a transfer needs a new grant.
enum GrantNeed: Sendable, Hashable {
    /// The server refused the grant's token (expired, or the version is gone); its error.
    case refused(KioskError)
    /// A file's bytes did not match the grant the first time: the file may have changed on the server.
    case contentMismatch(path: String)

    /// The error the transfer fails with when the renewals are exhausted.
    var error: KioskError {
        switch self {
        case .refused(let error): error
        case .contentMismatch(let path): .invalidResponse("the bytes of \(path) did not match the grant")
        }
    }
}

/// How the engine ends a transfer that its owner must act on: internal, never shown to the app.
enum EngineSignal: Error, Sendable, Hashable {
    /// The transfer stopped for a new grant (the files in flight finished first; their bytes are kept). The owner
    /// decides whether to renew it (``DownloadStateMachine/grantNeeded(_:now:policy:random:)``).
    case needsNewGrant(reason: GrantNeed)
}
