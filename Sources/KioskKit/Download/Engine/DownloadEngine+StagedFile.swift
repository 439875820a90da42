import Foundation
import KioskCore

extension DownloadEngine {
    /// Gives a verified part its final name in staging and journals the file as verified: the journal makes the
    /// bytes (`bytes`, or the file by name when `nil`) and the folder's new entry durable before the record that says
    /// so, and a crash between the rename and the record finds the file complete and checks it again. Returns the
    /// change, for the caller's ``DownloadWork``.
    func commitVerified(
        _ file: GrantFile, part: URL, final: URL, bytes: UnsyncedFile?, hooks: EngineHooks
    ) async throws(KioskError) -> DownloadChange {
        do {
            try fileSystem.rename(part, to: final)
        } catch {
            throw .fileSystem(path: file.path, underlying: "could not move the verified file")
        }
        let change = DownloadChange.verified(path: file.path)
        await hooks.checkpoint(
            [change], final.deletingLastPathComponent(), bytes ?? UnsyncedFile(final, fileSystem: fileSystem))
        return change
    }
}
