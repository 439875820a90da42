import Foundation

/// Checks installed content against the disk: the OS may purge the caches directory at any time, and content
/// whose files are gone must be reported as not installed (re-downloadable), never as finished.
enum ContentReconciler {
    /// The outcome for one installed version.
    enum Verdict: Sendable, Hashable {
        /// Every file is present with its recorded size.
        case intact
        /// These paths are missing or have the wrong size.
        case damaged(missing: [String])
    }

    /// Checks every file of `content` with `fileSize` (which returns `nil` for a missing file).
    static func check(_ content: InstalledContent, fileSize: (URL) -> Int64?) -> Verdict {
        var missing: [String] = []
        for file in content.files where fileSize(content.fileURL(file.path)) != file.length {
            missing.append(file.path)
        }
        if content.files.isEmpty, fileSize(content.directory) == nil { return .damaged(missing: ["."]) }
        return missing.isEmpty ? .intact : .damaged(missing: missing)
    }

    /// Splits `installed` into what is still intact and what vanished, using `fileSize`.
    static func reconcile(_ installed: [InstalledContent], fileSize: (URL) -> Int64?)
        -> (intact: [InstalledContent], vanished: [InstalledContent])
    {
        var intact: [InstalledContent] = []
        var vanished: [InstalledContent] = []
        for content in installed {
            if case .intact = check(content, fileSize: fileSize) {
                intact.append(content)
            } else {
                vanished.append(content)
            }
        }
        return (intact, vanished)
    }

    /// Splits `installed` into what is intact and what vanished at a cost per product, not per file: content
    /// whose marker (``ContentIdentity``) still matches costs one `stat` per folder of the product. Content without
    /// a marker, or whose marker no longer matches, gets the full check of every file, and a new marker when intact.
    ///
    /// The guarantee: a file deleted, added or renamed, and a folder deleted or replaced, all change a folder's
    /// modification time or identity, so they are noticed before the content is reported. Not noticed by the cheap
    /// check: a file's bytes changed in place (written or truncated without being unlinked), which leaves its folder
    /// untouched. KioskKit itself never does that, and the OS purging the caches deletes files.
    static func reconcile(_ installed: [InstalledContent], markers: ContentMarkers)
        -> (intact: [InstalledContent], vanished: [InstalledContent])
    {
        var intact: [InstalledContent] = []
        var vanished: [InstalledContent] = []
        for content in installed {
            if let identity = markers.identity(of: content.productID), identity.matches(content, markers.fileSystem) {
                intact.append(content)
            } else if case .intact = check(content, fileSize: markers.fileSystem.fileSize) {
                markers.record(content)
                intact.append(content)
            } else {
                markers.forget(content.productID)
                vanished.append(content)
            }
        }
        return (intact, vanished)
    }

    /// The real file system's answer for ``check(_:fileSize:)``: the size of a regular file, 0 for a folder,
    /// `nil` when absent.
    static func diskFileSize(_ url: URL) -> Int64? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return nil }
        if attributes[.type] as? FileAttributeType == .typeDirectory { return 0 }
        return (attributes[.size] as? NSNumber)?.int64Value
    }

    /// Marks a folder and its files as excluded from iCloud and device backups (Apple platforms; no-op elsewhere).
    static func excludeFromBackup(_ url: URL) {
        #if os(iOS) || os(macOS) || os(tvOS) || os(visionOS) || os(watchOS)
            var values = URLResourceValues()
            values.isExcludedFromBackup = true
            var target = url
            try? target.setResourceValues(values)
        #endif
    }
}

/// What one installed version's folders looked like when KioskKit last saw them whole: each folder's device, inode
/// and modification time. Recorded at install (and after a full check that passed); compared with one `stat` per
/// folder.
struct ContentIdentity: Sendable, Hashable, Codable {
    /// One folder of the content.
    struct Folder: Sendable, Hashable, Codable {
        /// Relative to the content folder ("" for the content folder itself).
        var path: String
        var device: UInt64
        var inode: UInt64
        var modified: Int64
    }

    var version: String
    var directory: String
    var fileCount: Int
    var folders: [Folder]

    /// The identity of `content`'s folders now (one `stat` per folder), `nil` when one is missing.
    init?(_ content: InstalledContent, fileSystem: any KioskFileSystem) {
        var paths: Set<String> = [""]
        for file in content.files {
            var folder = Substring(file.path)
            while let slash = folder.lastIndex(of: "/") {
                folder = folder[..<slash]
                guard paths.insert(String(folder)).inserted else { break }
            }
        }
        var folders: [Folder] = []
        for path in paths.sorted() {
            let url =
                path.isEmpty ? content.directory : content.directory.appendingPathComponent(path, isDirectory: true)
            guard let status = fileSystem.status(url), status.kind == .directory else { return nil }
            folders.append(Folder(path: path, device: status.device, inode: status.inode, modified: status.modified))
        }
        self.version = content.version
        self.directory = content.directory.standardizedFileURL.path
        self.fileCount = content.files.count
        self.folders = folders
    }

    /// Whether `content` is still the version, place and folders recorded (one `stat` per folder).
    func matches(_ content: InstalledContent, _ fileSystem: any KioskFileSystem) -> Bool {
        guard version == content.version, directory == content.directory.standardizedFileURL.path,
            fileCount == content.files.count
        else { return false }
        for folder in folders {
            let url =
                folder.path.isEmpty
                ? content.directory : content.directory.appendingPathComponent(folder.path, isDirectory: true)
            guard let status = fileSystem.status(url), status.kind == .directory, status.device == folder.device,
                status.inode == folder.inode, status.modified == folder.modified
            else { return false }
        }
        return true
    }
}

/// The ``ContentIdentity`` of each installed product: kept in memory, and in `<root>/Markers/<product_id>.json` so
/// that a relaunch checks per product too. A marker that is missing or unreadable only costs a full check.
final class ContentMarkers: Sendable {
    let layout: CacheLayout
    let fileSystem: any KioskFileSystem
    private let identities = Locked<[String: ContentIdentity]>([:])

    init(layout: CacheLayout, fileSystem: any KioskFileSystem) {
        self.layout = layout
        self.fileSystem = fileSystem
    }

    private func url(_ productID: String) -> URL {
        layout.root.appendingPathComponent("Markers", isDirectory: true).appendingPathComponent(productID + ".json")
    }

    /// The recorded identity (read from its marker file on first use).
    func identity(of productID: String) -> ContentIdentity? {
        if let known = identities.withLock({ $0[productID] }) { return known }
        guard let data = fileSystem.contents(of: url(productID), limit: 16 << 20),
            let identity = try? JSONDecoder().decode(ContentIdentity.self, from: data)
        else { return nil }
        identities.withLock { $0[productID] = identity }
        return identity
    }

    /// Records `content`'s identity now (after an install, a move, or a full check that passed).
    func record(_ content: InstalledContent) {
        guard let identity = ContentIdentity(content, fileSystem: fileSystem),
            let data = try? JSONEncoder().encode(identity)
        else { return forget(content.productID) }
        identities.withLock { $0[content.productID] = identity }
        let marker = url(content.productID)
        try? CacheFiles.createDirectory(marker.deletingLastPathComponent(), under: layout.root, fileSystem: fileSystem)
        try? CacheFiles.writeAtomically(data, to: marker, fileSystem: fileSystem)
    }

    /// Forgets a product's identity (removed or vanished).
    func forget(_ productID: String) {
        identities.withLock { $0[productID] = nil }
        fileSystem.remove(url(productID))
    }
}
