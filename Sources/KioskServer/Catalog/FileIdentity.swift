#if canImport(Darwin)
    import Darwin
#else
    import Glibc
#endif

/// What tells one version of a content file from another without reading it: size, modification time, and the
/// file's identity on its file system (device, inode and status-change time).
///
/// Size and modification time alone are not enough: `cp -p`, `rsync -t` and tar write new bytes with the old
/// modification time. They cannot keep the inode (a renamed replacement is a new file) nor the status-change time
/// (no call sets it back), so a file whose identity is unchanged has not been written since it was hashed.
public struct FileIdentity: Sendable, Hashable, Codable {
    /// The size in bytes.
    public var size: Int64
    /// The modification time (nanoseconds since 1970), which `Last-Modified` is built from.
    public var modifiedNanoseconds: Int64
    /// The status-change time (nanoseconds since 1970).
    public var changedNanoseconds: Int64
    /// The inode number.
    public var inode: UInt64
    /// The device the file lives on.
    public var device: UInt64

    /// Creates an identity from its parts.
    public init(size: Int64, modifiedNanoseconds: Int64, changedNanoseconds: Int64, inode: UInt64, device: UInt64) {
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
        self.changedNanoseconds = changedNanoseconds
        self.inode = inode
        self.device = device
    }

    /// The identity in a `stat` result.
    init(_ info: CStat) {
        #if canImport(Darwin)
            let (modified, changed) = (info.st_mtimespec, info.st_ctimespec)
        #else
            let (modified, changed) = (info.st_mtim, info.st_ctim)
        #endif
        self.init(
            size: Int64(info.st_size),
            modifiedNanoseconds: Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec),
            changedNanoseconds: Int64(changed.tv_sec) * 1_000_000_000 + Int64(changed.tv_nsec),
            inode: UInt64(info.st_ino), device: UInt64(info.st_dev))
    }

    /// The identity of the regular file at `path` (following no links), nil when there is none.
    public init?(atPath path: String) {
        var info = CStat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        self.init(info)
    }

    /// The identity of an open file, nil when `fstat` fails.
    public init?(descriptor: CInt) {
        var info = CStat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }
}

/// The C `struct stat`, named so that it does not clash with functions called `stat`.
typealias CStat = stat
