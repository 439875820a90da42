import Foundation
import KioskCore

/// Events about installed content: vanished, removed by the app, moved out of the caches.
extension DownloadCoordinator {
    /// Installed content whose files vanished: not installed any more, and its finished downloads are forgotten.
    /// Content in `partial` still has some of its files: it is kept as ``damaged`` for the next download to copy
    /// from; the rest is forgotten by the journal too.
    mutating func contentVanished(_ vanished: [InstalledContent], partial: Set<String>) -> [Action] {
        var actions: [Action] = []
        for content in vanished {
            installed[content.productID] = nil
            if partial.contains(content.productID) {
                damaged[content.productID] = content
            } else {
                damaged[content.productID] = nil
                actions.append(.journal([.removed(productID: content.productID)], synchronize: false))
            }
            for download in downloads.values where download.productID == content.productID {
                if case .finished = download.state { actions += forget(download.id) }
            }
            actions.append(.emit(.removed(productID: content.productID, version: content.version)))
        }
        return actions
    }

    /// The app removed a product's content (or what is left of it, when ``damaged``): it and its finished downloads
    /// are forgotten.
    mutating func removeContent(of productID: String) -> (InstalledContent, [Action])? {
        guard let content = installed.removeValue(forKey: productID) ?? damaged.removeValue(forKey: productID) else {
            return nil
        }
        var actions: [Action] = [.deleteContent(content), .forgetMarker(productID: productID)]
        for download in downloads.values where download.productID == productID && download.state == .finished {
            actions += forget(download.id)
        }
        actions += [
            .journal([.removed(productID: productID)], synchronize: true),
            .emit(.removed(productID: productID, version: content.version)),
        ]
        return (content, actions)
    }

    /// Installed content now lives elsewhere (moved out of the caches).
    mutating func contentMoved(_ content: InstalledContent) -> [Action] {
        installed[content.productID] = content
        return [.recordMarker(content), .journal([.installed(content)], synchronize: true)]
    }

}
