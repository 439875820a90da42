import Foundation

extension InstalledContent {
    /// This content as the journal keeps it: in the caches, its folder relative to the cache root
    /// (`Content/<product>/<version>`), so that a cache root that moves (the app container's path changes with a
    /// reinstall, a restore or an update) or is copied keeps what it has; the folder the app moved it to otherwise
    /// (``KioskClient/moveContentOutOfCaches(productID:to:)``), as it is.
    func journaled() -> InstalledContent {
        guard !isOutsideCaches,
            let relative = URL(string: "\(CacheLayout.contentFolderName)/\(productID)/\(version)")
        else { return self }
        var content = self
        content.directory = relative
        return content
    }

    /// Content read from the journal of `layout`: in the caches, its folder is where the cache root is now,
    /// whatever the journal says (a journal written before paths were relative names the root where it was then).
    func resolved(in layout: CacheLayout) -> InstalledContent {
        guard !isOutsideCaches else { return self }
        var content = self
        content.directory = layout.content(productID: productID, version: version)
        return content
    }
}

extension JournalEntry {
    /// The entry as the journal keeps it (``InstalledContent/journaled()``).
    func journaled() -> JournalEntry {
        guard case .installed(let content) = self else { return self }
        return .installed(content.journaled())
    }
}

extension JournalSnapshot {
    /// The snapshot as the journal keeps it (``InstalledContent/journaled()``).
    func journaled() -> JournalSnapshot {
        var snapshot = self
        snapshot.installed = installed.map { $0.journaled() }
        return snapshot
    }

    /// The snapshot read from the journal of `layout` (``InstalledContent/resolved(in:)``).
    func resolved(in layout: CacheLayout) -> JournalSnapshot {
        var snapshot = self
        snapshot.installed = installed.map { $0.resolved(in: layout) }
        return snapshot
    }
}
