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

    /// Creates `url` as a new, empty file open for writing (mode 0600). Whatever had its name (a stale temporary
    /// file, a planted link) is unlinked first, never followed. Returns the descriptor, or -1 with `errno` set.
    static func createFresh(_ url: URL) -> Int32 {
        url.withUnsafeFileSystemRepresentation { path -> Int32 in
            guard let path else {
                errno = EINVAL
                return -1
            }
            _ = unlink(path)  // ENOENT is the usual answer
            return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        }
    }

    /// Writes `data` to `url` atomically and durably: a fresh `<name>.tmp` beside it, fsync, then rename over `url`
    /// (a rename replaces a link at `url`, it does not follow it).
    static func writeAtomically(_ data: Data, to url: URL) throws(KioskError) {
        let temporary = url.appendingPathExtension("tmp")
        try Journal.writeDurably(data, to: temporary)
        let renamed = temporary.withUnsafeFileSystemRepresentation { from in
            url.withUnsafeFileSystemRepresentation { to in
                guard let from, let to else { return Int32(-1) }
                return rename(from, to)
            }
        }
        guard renamed == 0 else {
            let code = errno
            try? FileManager.default.removeItem(at: temporary)
            throw .fileSystem(path: url.lastPathComponent, underlying: String(cString: strerror(code)))
        }
    }

    /// Creates the folder `url` and its missing parents below `root`, refusing any component below `root` that is
    /// a symbolic link or not a folder.
    static func createDirectory(_ url: URL, under root: URL) throws(KioskError) {
        let rootPath = root.standardizedFileURL.path
        let path = url.standardizedFileURL.path
        guard path == rootPath || path.hasPrefix(rootPath.hasSuffix("/") ? rootPath : rootPath + "/") else {
            throw .fileSystem(path: path, underlying: "the folder is outside the cache root")
        }
        do {
            try FileManager.default.createDirectory(atPath: rootPath, withIntermediateDirectories: true)
        } catch {
            throw .fileSystem(path: rootPath, underlying: error.localizedDescription)
        }
        var current = rootPath
        for component in path.dropFirst(rootPath.count).split(separator: "/") {
            current += (current.hasSuffix("/") ? "" : "/") + component
            var info = stat()
            if lstat(current, &info) != 0 {
                guard errno == ENOENT, mkdir(current, 0o755) == 0 || errno == EEXIST, lstat(current, &info) == 0 else {
                    throw .fileSystem(path: current, underlying: String(cString: strerror(errno)))
                }
            }
            switch info.st_mode & S_IFMT {
            case S_IFDIR: continue
            case S_IFLNK: throw .fileSystem(path: current, underlying: "refused to follow a symbolic link in the cache")
            default: throw .fileSystem(path: current, underlying: "a file is where a folder belongs")
            }
        }
    }
}
