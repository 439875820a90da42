import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension KioskClient {
    /// Installed content, checked against the disk first: content whose files vanished (the system may purge
    /// caches) is dropped and reported with ``KioskEvent/removed(productID:version:)``; enqueue it again. After
    /// ``close()``: the last known content, unchecked.
    public func installedContent() -> [InstalledContent] {
        reconcileInstalled()
        return coordinator.installed.values.sorted { $0.productID < $1.productID }
    }

    /// The installed content of one product, checked against the disk (after ``close()``: the last known, unchecked);
    /// `nil` when not installed.
    public func installedContent(for productID: String) -> InstalledContent? {
        reconcileInstalled()
        return coordinator.installed[productID]
    }

    /// The previous versions of a product kept by ``update(productID:proof:priority:keepingPrevious:)``, by version.
    /// They are plain folders that KioskKit no longer tracks or checks: in the caches directory, which the system
    /// may purge, until ``removeKeptVersion(_:)`` deletes them.
    public func keptVersions(of productID: String) -> [KeptVersion] {
        guard Identifiers.isValidProductID(productID) else { return [] }
        let folder = layout.keptRoot.appendingPathComponent(productID, isDirectory: true)
        return (fileSystem.contentsOfDirectory(folder) ?? []).sorted().map { version in
            KeptVersion(productID: productID, version: version, directory: folder.appendingPathComponent(version))
        }
    }

    /// Deletes a kept previous version (see ``keptVersions(of:)``).
    /// - Throws: ``KioskError/notFound(productID:)`` when that version of the product is not kept.
    public func removeKeptVersion(_ kept: KeptVersion) throws(KioskError) {
        try ensureOpen()
        guard keptVersions(of: kept.productID).contains(where: { $0.version == kept.version }) else {
            throw .notFound(productID: kept.productID)
        }
        fileSystem.remove(layout.kept(productID: kept.productID, version: kept.version))
    }

    /// Moves the previous version of an updated product to ``CacheLayout/kept(productID:version:)``, replacing an
    /// earlier kept copy of the same version; content moved out of the caches stays where the app put it. When the
    /// move fails, the folder stays where it was (never deleted: the app asked to keep it).
    func keep(_ content: InstalledContent) {
        guard !content.isOutsideCaches else { return }
        let destination = layout.kept(productID: content.productID, version: content.version)
        fileSystem.remove(destination)
        let parent = destination.deletingLastPathComponent()
        guard (try? CacheFiles.createDirectory(parent, under: layout.root, fileSystem: fileSystem)) != nil else {
            return
        }
        try? fileSystem.rename(content.directory, to: destination)
    }

    /// Deletes a product's installed content (content moved out of the caches is forgotten, not deleted). Previous
    /// versions kept by updates stay (see ``keptVersions(of:)``).
    /// - Throws: ``KioskError/downloadInProgress(productID:)`` when nothing is installed yet and the product's
    ///   download is on its way (cancel it to stop it); ``KioskError/notFound(productID:)`` when the product is
    ///   neither installed nor downloading.
    public func remove(_ productID: String) throws(KioskError) {
        try ensureOpen()
        guard let (_, actions) = coordinator.removeContent(of: productID) else {
            if let download = coordinator.live(for: productID), !download.state.isTerminal {
                throw .downloadInProgress(productID: productID)
            }
            throw .notFound(productID: productID)
        }
        execute(actions)
    }

    /// Moves a product's installed content out of the caches directory (which the system may purge) to
    /// `directory`, which must not exist yet. The library keeps tracking it there but never deletes it.
    public func moveContentOutOfCaches(productID: String, to directory: URL) throws(KioskError) -> InstalledContent {
        try ensureOpen()
        reconcileInstalled()
        guard var content = coordinator.installed[productID] else { throw .notFound(productID: productID) }
        do {
            try CacheFiles.createRoot(directory.deletingLastPathComponent(), fileSystem: fileSystem)
            try fileSystem.move(content.directory, to: directory)
        } catch let error as KioskError {
            throw error
        } catch {
            throw .fileSystem(path: directory.path, underlying: (error as? SystemCallError)?.message ?? "\(error)")
        }
        content.directory = directory.standardizedFileURL
        content.isOutsideCaches = true
        execute(coordinator.contentMoved(content))
        return content
    }
}
