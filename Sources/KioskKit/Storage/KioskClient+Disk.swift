import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension KioskClient {
    /// Drops installed content whose files vanished, and finished downloads that pointed at it; content with some
    /// files left is kept for the next download to copy from. Not after ``close()``: a closed client answers the
    /// last known state (another client may own the cache root by now).
    func reconcileInstalled() {
        guard !isClosed else { return }
        let (_, vanished) = ContentReconciler.reconcile(Array(coordinator.installed.values), markers: markers)
        guard !vanished.isEmpty else { return }
        let partial = vanished.filter { content in
            content.files.contains { fileSystem.fileSize(content.fileURL($0.path)) == $0.length }
        }
        execute(coordinator.contentVanished(vanished, partial: Set(partial.map(\.productID))))
    }

    /// Deletes staging folders no download owns (their receipts are unknown, so they cannot be resumed).
    func removeOrphanedStaging() {
        let owned = Set(
            coordinator.downloads.values.filter { !$0.state.isTerminal || $0.state.name == "failed" }.map(\.productID))
        guard let folders = fileSystem.contentsOfDirectory(layout.stagingRoot) else { return }
        for folder in folders where !owned.contains(folder) {
            fileSystem.remove(layout.stagingRoot.appendingPathComponent(folder))
        }
    }
}
