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
}
