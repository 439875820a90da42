import Foundation

/// Checks installed content against the disk: the OS may purge the caches directory at any time, and content
/// whose files are gone must be reported as not installed (re-downloadable), never as finished.
public enum ContentReconciler {
    /// The outcome for one installed version.
    public enum Verdict: Sendable, Hashable {
        /// Every file is present with its recorded size.
        case intact
        /// These paths are missing or have the wrong size.
        case damaged(missing: [String])
    }

    /// Checks every file of `content` with `fileSize` (which returns `nil` for a missing file).
    public static func check(_ content: InstalledContent, fileSize: (URL) -> Int64?) -> Verdict {
        var missing: [String] = []
        for file in content.files where fileSize(content.url(for: file.path)) != file.length {
            missing.append(file.path)
        }
        if content.files.isEmpty, fileSize(content.directory) == nil { return .damaged(missing: ["."]) }
        return missing.isEmpty ? .intact : .damaged(missing: missing)
    }

    /// Splits `installed` into what is still intact and what vanished, using `fileSize`.
    public static func reconcile(_ installed: [InstalledContent], fileSize: (URL) -> Int64?)
        -> (intact: [InstalledContent], vanished: [InstalledContent]) {
        var intact: [InstalledContent] = []
        var vanished: [InstalledContent] = []
        for content in installed {
            if case .intact = check(content, fileSize: fileSize) { intact.append(content) } else { vanished.append(content) }
        }
        return (intact, vanished)
    }

    /// The real file system's answer for ``check(_:fileSize:)``: the size of a regular file, 0 for a folder,
    /// `nil` when absent.
    public static func diskFileSize(_ url: URL) -> Int64? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return nil }
        if attributes[.type] as? FileAttributeType == .typeDirectory { return 0 }
        return (attributes[.size] as? NSNumber)?.int64Value
    }

    /// Marks a folder and its files as excluded from iCloud and device backups (Apple platforms; no-op elsewhere).
    public static func excludeFromBackup(_ url: URL) {
        #if os(iOS) || os(macOS) || os(tvOS) || os(visionOS) || os(watchOS)
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        var target = url
        try? target.setResourceValues(values)
        #endif
    }
}
