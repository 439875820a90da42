import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes downloaded bytes to a partial file. One writer is used by one transfer at a time, from one thread at a
/// time, so implementations need no locking of their own.
public protocol PartFileWriter: AnyObject {
    /// Appends bytes at the end of the file. Throws ``KioskError/insufficientStorage(needed:available:)`` when the
    /// disk is full (`ENOSPC`/`EDQUOT`); bytes written before the error stay in the file.
    func write(_ bytes: UnsafeRawBufferPointer) throws(KioskError)
    /// Closes the file.
    func close()
}

/// Opens partial files for appending; inject your own (see ``KioskClient/Configuration/fileWriterFactory``) to
/// simulate a full disk in tests.
public struct FileWriterFactory: Sendable {
    /// Opens `url` for appending (creating it if needed), after truncating it to `offset` bytes.
    public var open: @Sendable (_ url: URL, _ offset: Int64) throws(KioskError) -> any PartFileWriter

    /// Creates a factory from a closure.
    public init(open: @escaping @Sendable (_ url: URL, _ offset: Int64) throws(KioskError) -> any PartFileWriter) {
        self.open = open
    }

    /// The default: POSIX `open`/`write` on the real file system.
    public static let posix = FileWriterFactory { url, offset throws(KioskError) in
        try POSIXPartFileWriter(url: url, truncatingTo: offset)
    }
}

/// The default ``PartFileWriter``: a plain file descriptor, `write(2)` in a loop, typed errors.
public final class POSIXPartFileWriter: PartFileWriter {
    private var descriptor: Int32
    private let path: String

    /// Opens `url` for writing at `offset`, truncating anything after it. A symbolic link at `url` is refused,
    /// never followed.
    public init(url: URL, truncatingTo offset: Int64) throws(KioskError) {
        path = url.path
        let fd = url.withUnsafeFileSystemRepresentation { path -> Int32 in
            guard let path else { return -1 }
            return open(path, CacheFiles.appendFlags, 0o644)
        }
        guard fd >= 0 else { throw Self.error(errno, path: url.path, needed: 0) }
        guard ftruncate(fd, off_t(offset)) == 0, lseek(fd, off_t(offset), SEEK_SET) >= 0 else {
            let code = errno
            _ = closeDescriptor(fd)
            throw Self.error(code, path: url.path, needed: 0)
        }
        descriptor = fd
    }

    deinit { close() }

    /// Appends all of `bytes`, retrying short writes and `EINTR`.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(KioskError) {
        guard var base = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let written = systemWrite(descriptor, base, left)
            if written < 0 {
                if errno == EINTR { continue }
                throw Self.error(errno, path: path, needed: Int64(left))
            }
            left -= written
            base += written
        }
    }

    /// Closes the descriptor (idempotent).
    public func close() {
        if descriptor >= 0 {
            _ = closeDescriptor(descriptor)
            descriptor = -1
        }
    }

    static func error(_ code: Int32, path: String, needed: Int64) -> KioskError {
        if code == ENOSPC || code == EDQUOT { return .insufficientStorage(needed: needed, available: nil) }
        if code == ELOOP { return .fileSystem(path: path, underlying: "refused to follow a symbolic link in the cache") }
        return .fileSystem(path: path, underlying: String(cString: strerror(code)))
    }
}

@inline(__always) private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}

@inline(__always) private func closeDescriptor(_ fd: Int32) -> Int32 { close(fd) }
