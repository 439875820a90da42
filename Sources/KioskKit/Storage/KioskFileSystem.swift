import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What `stat(2)` says about one path: enough to size a file and to tell whether a folder is still the one
/// KioskKit wrote (device, inode and modification time change when it is replaced or its entries change).
struct FileStatus: Sendable, Hashable, Codable {
    /// The kind of object at the path.
    enum Kind: String, Sendable, Hashable, Codable {
        case regular, directory, symbolicLink, other
    }

    var kind: Kind
    var size: Int64
    var device: UInt64
    var inode: UInt64
    /// Modification time in nanoseconds since 1970.
    var modified: Int64
}

/// A failed system call: its `errno` (and, from a Foundation call, Foundation's description).
struct SystemCallError: Error, Sendable, Hashable {
    var code: Int32
    var detail: String? = nil

    /// The description, or `strerror` of the code.
    var message: String { detail ?? String(cString: strerror(code)) }
}

/// One open file. Every call on it is a call of the ``KioskFileSystem`` that opened it.
protocol KioskFile: AnyObject {
    /// Writes all of `bytes` at the current offset (retrying short writes and `EINTR`).
    func write(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError)
    /// Reads up to `buffer.count` bytes at the current offset; 0 at the end of the file.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int
    /// Writes all of `bytes` at `offset` (`pwrite(2)`: the current offset does not move, and several threads may
    /// write different ranges of one file at once).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(SystemCallError)
    /// Reads up to `buffer.count` bytes at `offset` (`pread(2)`); 0 at the end of the file.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemCallError) -> Int
    /// Truncates the file to `length` and moves the offset there.
    func truncate(to length: Int64) throws(SystemCallError)
    /// `fsync(2)`: the bytes and the size reach the disk.
    func synchronize() throws(SystemCallError)
    /// Closes the file (idempotent).
    func close()
}

extension KioskFile {
    /// Writes all of `data`.
    func write(_ data: Data) throws(SystemCallError) {
        let result: Result<Void, SystemCallError> = data.withUnsafeBytes { bytes in
            do throws(SystemCallError) {
                try write(bytes)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }
}

/// How a file is opened by ``KioskFileSystem/open(_:mode:)``.
enum FileOpenMode: Sendable, Hashable {
    /// Read only.
    case read
    /// Write, creating the file (mode 0644) when missing, never following a symbolic link.
    case write
    /// Append, creating the file (mode 0600) when missing, never following a symbolic link.
    case append
    /// A new, empty file (mode 0600): whatever had its name (a stale file, a planted link) is unlinked first.
    case createFresh
}

/// Every file-system call KioskKit makes: the engine's, the part-file writer's, the journal's, the reconciler's and
/// ``CacheFiles``'. The real one is ``POSIXFileSystem``; tests inject one that counts (or fails) calls, to show that
/// the work per file does not grow with the number of files.
protocol KioskFileSystem: Sendable {
    /// `stat(2)` (following a final symbolic link); `nil` when nothing is there.
    func status(_ url: URL) -> FileStatus?
    /// `lstat(2)` of a path (never following a final symbolic link); `nil` when nothing is there.
    func linkStatus(_ path: String) -> FileStatus?
    /// `mkdir(2)` with mode 0755.
    func makeDirectory(_ path: String) throws(SystemCallError)
    /// Opens a file.
    func open(_ url: URL, mode: FileOpenMode) throws(SystemCallError) -> any KioskFile
    /// `rename(2)`: atomic within a volume, replaces (never follows) a link at `to`.
    func rename(_ from: URL, to: URL) throws(SystemCallError)
    /// Moves a folder, across volumes if needed (copy then delete).
    func move(_ from: URL, to: URL) throws(SystemCallError)
    /// Deletes a file or a folder with everything in it; nothing when absent.
    func remove(_ url: URL)
    /// The names in a folder, `nil` when it cannot be read.
    func contentsOfDirectory(_ url: URL) -> [String]?
    /// `fsync(2)` of a folder, so that the renames and creations in it are durable.
    func synchronizeDirectory(_ url: URL)
    /// Copies the file at `from` to a new file at `to` (whatever had that name is unlinked first, never followed): a
    /// clone sharing the bytes where the file system has one, a copy otherwise. Not fsynced. The default copies
    /// through ``open(_:mode:)`` (see ``copyByReading(_:to:)``).
    func copyFile(_ from: URL, to: URL) throws(SystemCallError)
}

extension KioskFileSystem {
    /// The whole file, `nil` when it cannot be read (or is larger than `limit`).
    func contents(of url: URL, limit: Int = 256 << 20) -> Data? {
        guard let file = try? open(url, mode: .read) else { return nil }
        defer { file.close() }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { (try? file.read(into: $0)) ?? -1 }
            if count < 0 { return nil }
            if count == 0 { return data }
            data.append(contentsOf: buffer[0..<count])
            if data.count > limit { return nil }
        }
    }

    /// The size of a regular file, 0 for a folder, `nil` when absent.
    func fileSize(_ url: URL) -> Int64? {
        guard let status = status(url) else { return nil }
        return status.kind == .directory ? 0 : status.size
    }

    /// Whether something is at `url`.
    func exists(_ url: URL) -> Bool { status(url) != nil }

    /// Copies through ``open(_:mode:)``, 1 MiB at a time.
    func copyFile(_ from: URL, to: URL) throws(SystemCallError) { try copyByReading(from, to: to) }

    /// Copies the file at `from` to a fresh file at `to` by reading and writing it, 1 MiB at a time.
    func copyByReading(_ from: URL, to: URL) throws(SystemCallError) {
        let source = try open(from, mode: .read)
        defer { source.close() }
        let target = try open(to, mode: .createFresh)
        defer { target.close() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
        defer { buffer.deallocate() }
        while true {
            let count = try source.read(into: buffer)
            if count == 0 { return }
            try target.write(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
    }

    /// Every regular file under `folder`, as paths relative to it, in no particular order (one directory listing
    /// per folder and one status per entry).
    func regularFiles(under folder: URL) -> [(path: String, status: FileStatus)] {
        var found: [(path: String, status: FileStatus)] = []
        var folders: [String] = [""]
        while let relative = folders.popLast() {
            let url = relative.isEmpty ? folder : folder.appendingPathComponent(relative, isDirectory: true)
            for name in contentsOfDirectory(url) ?? [] {
                let path = relative.isEmpty ? name : relative + "/" + name
                guard let status = linkStatus(folder.appendingPathComponent(path, isDirectory: false).path) else {
                    continue
                }
                switch status.kind {
                case .regular: found.append((path, status))
                case .directory: folders.append(path)
                case .symbolicLink, .other: continue
                }
            }
        }
        return found
    }
}

/// The real file system: POSIX calls, `FileManager` for recursive deletes, listings and cross-volume moves.
struct POSIXFileSystem: KioskFileSystem {
    func status(_ url: URL) -> FileStatus? {
        url.withUnsafeFileSystemRepresentation { path in
            var info = stat()
            guard let path, stat(path, &info) == 0 else { return nil }
            return Self.status(info)
        }
    }

    func linkStatus(_ path: String) -> FileStatus? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return Self.status(info)
    }

    func makeDirectory(_ path: String) throws(SystemCallError) {
        guard mkdir(path, 0o755) == 0 else { throw SystemCallError(code: errno) }
    }

    func open(_ url: URL, mode: FileOpenMode) throws(SystemCallError) -> any KioskFile {
        let fd = url.withUnsafeFileSystemRepresentation { path -> Int32 in
            guard let path else {
                errno = EINVAL
                return -1
            }
            switch mode {
            case .read: return systemOpen(path, O_RDONLY | O_CLOEXEC, 0)
            case .write: return systemOpen(path, CacheFiles.appendFlags, 0o644)
            case .append: return systemOpen(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            case .createFresh:
                _ = unlink(path)  // ENOENT is the usual answer
                return systemOpen(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            }
        }
        guard fd >= 0 else { throw SystemCallError(code: errno) }
        return POSIXFile(descriptor: fd)
    }

    func rename(_ from: URL, to: URL) throws(SystemCallError) {
        let result = from.withUnsafeFileSystemRepresentation { source in
            to.withUnsafeFileSystemRepresentation { target -> Int32 in
                guard let source, let target else { return -1 }
                return systemRename(source, target)
            }
        }
        guard result == 0 else { throw SystemCallError(code: errno) }
    }

    func move(_ from: URL, to: URL) throws(SystemCallError) {
        do {
            try FileManager.default.moveItem(at: from, to: to)
        } catch {
            let code = (error as NSError).code == NSFileWriteFileExistsError ? EEXIST : EIO
            throw SystemCallError(code: code, detail: error.localizedDescription)
        }
    }

    func remove(_ url: URL) { try? FileManager.default.removeItem(at: url) }

    func contentsOfDirectory(_ url: URL) -> [String]? { try? FileManager.default.contentsOfDirectory(atPath: url.path) }

    func synchronizeDirectory(_ url: URL) {
        guard let file = try? open(url, mode: .read) else { return }
        try? file.synchronize()
        file.close()
    }

    /// A clone (`FICLONE` on Linux: Btrfs, XFS; `clonefile(2)` on Darwin: APFS) where the volume has one, else a
    /// copy. A full disk is thrown, not worked around.
    func copyFile(_ from: URL, to: URL) throws(SystemCallError) {
        #if canImport(Darwin)
            let cloned = from.withUnsafeFileSystemRepresentation { source in
                to.withUnsafeFileSystemRepresentation { target -> Int32 in
                    guard let source, let target else { return EINVAL }
                    _ = unlink(target)
                    return clonefile(source, target, UInt32(CLONE_NOFOLLOW)) == 0 ? 0 : errno
                }
            }
            if cloned == 0 { return }
            if cloned == ENOSPC || cloned == EDQUOT { throw SystemCallError(code: cloned) }
        #elseif canImport(Glibc) || canImport(Musl)
            let source = try open(from, mode: .read)
            defer { source.close() }
            let target = try open(to, mode: .createFresh)
            defer { target.close() }
            if let source = source as? POSIXFile, let target = target as? POSIXFile {
                // FICLONE = _IOW(0x94, 9, int): the target shares the source's extents.
                if ioctl(target.descriptor, UInt(0x4004_9409), source.descriptor) == 0 { return }
                if errno == ENOSPC || errno == EDQUOT { throw SystemCallError(code: errno) }
            }
        #endif
        try copyByReading(from, to: to)
    }

    private static func status(_ info: stat) -> FileStatus {
        let kind: FileStatus.Kind =
            switch info.st_mode & S_IFMT {
            case S_IFREG: .regular
            case S_IFDIR: .directory
            case S_IFLNK: .symbolicLink
            default: .other
            }
        #if canImport(Darwin)
            let modified = Int64(info.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(info.st_mtimespec.tv_nsec)
        #else
            let modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        #endif
        return FileStatus(
            kind: kind, size: Int64(info.st_size), device: UInt64(info.st_dev),
            inode: UInt64(info.st_ino), modified: modified)
    }
}

/// A file descriptor.
final class POSIXFile: KioskFile {
    /// The descriptor, -1 once closed.
    fileprivate private(set) var descriptor: Int32

    init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close() }

    func write(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
        guard var base = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let written = systemWrite(descriptor, base, left)
            if written < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(code: errno)
            }
            left -= written
            base += written
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        while true {
            let count = systemRead(descriptor, base, buffer.count)
            if count >= 0 { return count }
            if errno != EINTR { throw SystemCallError(code: errno) }
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(SystemCallError) {
        guard var base = bytes.baseAddress else { return }
        var left = bytes.count
        var position = off_t(offset)
        while left > 0 {
            let written = pwrite(descriptor, base, left, position)
            if written < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(code: errno)
            }
            left -= written
            base += written
            position += off_t(written)
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemCallError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        while true {
            let count = pread(descriptor, base, buffer.count, off_t(offset))
            if count >= 0 { return count }
            if errno != EINTR { throw SystemCallError(code: errno) }
        }
    }

    func truncate(to length: Int64) throws(SystemCallError) {
        guard ftruncate(descriptor, off_t(length)) == 0, lseek(descriptor, off_t(length), SEEK_SET) >= 0 else {
            throw SystemCallError(code: errno)
        }
    }

    func synchronize() throws(SystemCallError) {
        guard fsync(descriptor) == 0 else { throw SystemCallError(code: errno) }
    }

    func close() {
        if descriptor >= 0 {
            _ = systemClose(descriptor)
            descriptor = -1
        }
    }
}

@inline(__always) private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}

@inline(__always) private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(fd, buffer, count)
}

@inline(__always) private func systemClose(_ fd: Int32) -> Int32 { close(fd) }

@inline(__always) private func systemOpen(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
    open(path, flags, mode)
}

@inline(__always) private func systemRename(_ from: UnsafePointer<CChar>, _ to: UnsafePointer<CChar>) -> Int32 {
    rename(from, to)
}
