import Foundation
import KioskCore

/// Moves a download's verified content from staging into place (``DownloadStateMachine/Action/verifyAndInstall``):
/// checks that every staged file still has its length (a purge of Caches may have taken some), then moves the
/// version folder into `Content/` with one rename and makes the rename durable.
struct ContentInstaller: Sendable {
    let layout: CacheLayout
    let fileSystem: any KioskFileSystem

    /// Checks the staged files once more and moves the version folder into `Content/` with one rename.
    func install(productID: String, grant: Grant) throws(KioskError) -> InstalledContent {
        let staging = layout.staging(productID: productID)
        for file in grant.files {
            let staged = layout.stagedFile(productID: productID, path: file.path)
            guard fileSystem.fileSize(staged) == file.length else {
                throw KioskError.fileSystem(path: file.path, underlying: "the verified file vanished before install")
            }
        }
        let destination = layout.content(productID: productID, version: grant.contentVersion)
        try CacheFiles.createDirectory(
            destination.deletingLastPathComponent(), under: layout.root, fileSystem: fileSystem)
        if fileSystem.exists(destination) {
            let trash = layout.root.appendingPathComponent("Trash-\(UUID().uuidString)", isDirectory: true)
            try? fileSystem.rename(destination, to: trash)
            fileSystem.remove(trash)
        }
        if grant.files.isEmpty { try CacheFiles.createDirectory(staging, under: layout.root, fileSystem: fileSystem) }
        do {
            try fileSystem.rename(staging, to: destination)
        } catch {
            throw KioskError.fileSystem(path: destination.path, underlying: "could not move the content into place")
        }
        fileSystem.synchronizeDirectory(destination.deletingLastPathComponent())
        ContentReconciler.excludeFromBackup(destination)
        return InstalledContent(
            productID: productID, version: grant.contentVersion, directory: destination,
            files: grant.files.map { file in
                // The grant's own strings, shared, unless a hash needs lowering (a copy per file otherwise).
                let sha256 =
                    file.sha256.utf8.contains { (0x41...0x46).contains($0) } ? file.sha256.lowercased() : file.sha256
                return InstalledFile(path: file.path, length: file.length, sha256: sha256)
            },
            installedAt: Date())
    }
}
