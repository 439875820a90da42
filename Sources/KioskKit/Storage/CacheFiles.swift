import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// How KioskKit creates folders and files under its cache root: never through a symbolic link. The cache root
/// itself may be a link (`/tmp` is one on macOS); below it, a link planted where KioskKit writes (the journal, part
/// files, the catalog cache, the installation ID, staging and content folders) makes the write fail instead of
/// landing wherever the link points.
enum CacheFiles {
    /// The flags for opening a part file to append to: created if missing, never followed if a link.
    static let appendFlags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC

    /// Writes `data` to a fresh `url` (unlinking whatever had its name, never following it) and fsyncs it.
    static func writeDurably(_ data: Data, to url: URL, fileSystem: any KioskFileSystem) throws(KioskError) {
        try writeDurably(to: url, fileSystem: fileSystem, length: Int64(data.count)) { file in try file.write(data) }
    }

    /// Opens a fresh `url` (unlinking whatever had its name, never following it), lets `write` fill it and fsyncs
    /// it. A full disk is ``KioskError/insufficientStorage(needed:available:)`` with `length` when known, else the
    /// length reached; an error of `write` that is not a system call's is a journal error.
    static func writeDurably(
        to url: URL, fileSystem: any KioskFileSystem, length: Int64? = nil, _ write: (any KioskFile) throws -> Void
    ) throws(KioskError) {
        let file: any KioskFile
        do {
            file = try fileSystem.open(url, mode: .createFresh)
        } catch {
            throw failure(error, url, fileSystem, length)
        }
        defer { file.close() }
        do {
            try write(file)
            try file.synchronize()
        } catch let error as SystemCallError {
            throw failure(error, url, fileSystem, length)
        } catch {
            throw .journal("writing \(url.lastPathComponent) failed: \(error)")
        }
    }

    private static func failure(
        _ error: SystemCallError, _ url: URL, _ fileSystem: any KioskFileSystem, _ length: Int64?
    ) -> KioskError {
        if error.code == ENOSPC || error.code == EDQUOT {
            return .insufficientStorage(needed: length ?? fileSystem.status(url)?.size ?? 0, available: nil)
        }
        return .fileSystem(path: url.lastPathComponent, underlying: error.message)
    }

    /// Writes `data` to `url` atomically and durably: a fresh `<name>.tmp` beside it, fsync, then rename over `url`
    /// (a rename replaces a link at `url`, it does not follow it).
    static func writeAtomically(_ data: Data, to url: URL, fileSystem: any KioskFileSystem) throws(KioskError) {
        let temporary = url.appendingPathExtension("tmp")
        try writeDurably(data, to: temporary, fileSystem: fileSystem)
        do {
            try fileSystem.rename(temporary, to: url)
        } catch {
            fileSystem.remove(temporary)
            throw .fileSystem(path: url.lastPathComponent, underlying: error.message)
        }
    }

    /// Creates the folder `url` and its missing parents below `root`, refusing any component below `root` that is
    /// a symbolic link or not a folder.
    static func createDirectory(_ url: URL, under root: URL, fileSystem: any KioskFileSystem) throws(KioskError) {
        let rootPath = root.standardizedFileURL.path
        let path = url.standardizedFileURL.path
        guard path == rootPath || path.hasPrefix(rootPath.hasSuffix("/") ? rootPath : rootPath + "/") else {
            throw .fileSystem(path: path, underlying: "the folder is outside the cache root")
        }
        try createRoot(root, fileSystem: fileSystem)
        var current = rootPath
        for component in path.dropFirst(rootPath.count).split(separator: "/") {
            current += (current.hasSuffix("/") ? "" : "/") + component
            var status = fileSystem.linkStatus(current)
            if status == nil {
                do {
                    try fileSystem.makeDirectory(current)
                } catch  where error.code == EEXIST {
                } catch {
                    throw .fileSystem(path: current, underlying: error.message)
                }
                status = fileSystem.linkStatus(current)
            }
            switch status?.kind {
            case .directory?: continue
            case .symbolicLink?:
                throw .fileSystem(path: current, underlying: "refused to follow a symbolic link in the cache")
            case nil: throw .fileSystem(path: current, underlying: "the folder could not be created")
            default: throw .fileSystem(path: current, underlying: "a file is where a folder belongs")
            }
        }
    }

    /// Creates the cache root and its missing parents (the root itself may be, or lie below, a symbolic link).
    static func createRoot(_ root: URL, fileSystem: any KioskFileSystem) throws(KioskError) {
        guard fileSystem.status(root)?.kind != .directory else { return }
        var missing: [URL] = []
        var folder = root.standardizedFileURL
        while fileSystem.status(folder) == nil, folder.path != "/" {
            missing.append(folder)
            folder.deleteLastPathComponent()
        }
        for folder in missing.reversed() {
            do {
                try fileSystem.makeDirectory(folder.path)
            } catch  where error.code == EEXIST {
            } catch {
                throw .fileSystem(path: folder.path, underlying: error.message)
            }
        }
    }
}
