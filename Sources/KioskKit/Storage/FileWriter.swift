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
    /// Makes the bytes written so far durable (`fsync`). Called once, when the file is complete, before it is
    /// verified and recorded as such. The default does nothing.
    func synchronize() throws(KioskError)
    /// Closes the file.
    func close()
}

extension PartFileWriter {
    /// Does nothing: a writer that does not override it gives no durability guarantee.
    public func synchronize() throws(KioskError) {}
}

/// A ``PartFileWriter`` that can also write at any offset, from several threads at once: what a file fetched by
/// chunks needs (several ranges of it in flight). ``POSIXPartFileWriter`` is one; a file opened by a factory whose
/// writers are not is fetched whole, in order, as by a server that sends no chunks.
public protocol PositionalPartFileWriter: PartFileWriter, Sendable {
    /// Writes all of `bytes` at `offset`, extending the file if needed; the end of the file for
    /// ``PartFileWriter/write(_:)`` does not move. May be called from several threads at once for ranges that do not
    /// overlap, and concurrently with ``PartFileWriter/synchronize()``. Throws
    /// ``KioskError/insufficientStorage(needed:available:)`` when the disk is full.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(KioskError)
}

/// Opens partial files for appending; inject your own (see ``KioskClient/Configuration/fileWriterFactory``) to
/// simulate a full disk in tests.
public struct FileWriterFactory: Sendable {
    /// Opens `url` for appending (creating it if needed), after truncating it to `offset` bytes.
    public var open: @Sendable (_ url: URL, _ offset: Int64) throws(KioskError) -> any PartFileWriter
    /// Set for ``posix``: the client opens its part files through its own file system instead.
    var isPOSIX = false

    /// Creates a factory from a closure.
    public init(open: @escaping @Sendable (_ url: URL, _ offset: Int64) throws(KioskError) -> any PartFileWriter) {
        self.open = open
    }

    /// The default: POSIX `open`/`write` on the real file system.
    public static let posix: FileWriterFactory = {
        var factory = FileWriterFactory { url, offset throws(KioskError) in
            try POSIXPartFileWriter(url: url, truncatingTo: offset)
        }
        factory.isPOSIX = true
        return factory
    }()

    /// This factory, with ``posix`` opening its files through `fileSystem`.
    func using(_ fileSystem: any KioskFileSystem) -> FileWriterFactory {
        guard isPOSIX else { return self }
        return FileWriterFactory { url, offset throws(KioskError) in
            try POSIXPartFileWriter(url: url, truncatingTo: offset, fileSystem: fileSystem)
        }
    }
}

/// The default ``PartFileWriter``: a plain file descriptor, `write(2)` or `pwrite(2)` in a loop, typed errors.
///
/// `@unchecked Sendable`: its only state is constant after `init` (the descriptor and the path); `pwrite` and
/// `fsync` on one descriptor are safe from several threads.
public final class POSIXPartFileWriter: PositionalPartFileWriter, @unchecked Sendable {
    private let file: any KioskFile
    private let path: String

    /// Opens `url` for writing at `offset`, truncating anything after it. A symbolic link at `url` is refused,
    /// never followed.
    public convenience init(url: URL, truncatingTo offset: Int64) throws(KioskError) {
        try self.init(url: url, truncatingTo: offset, fileSystem: POSIXFileSystem())
    }

    init(url: URL, truncatingTo offset: Int64, fileSystem: any KioskFileSystem) throws(KioskError) {
        path = url.path
        do {
            file = try fileSystem.open(url, mode: .write)
        } catch {
            throw Self.error(error.code, path: url.path, needed: 0)
        }
        do {
            try file.truncate(to: offset)
        } catch {
            file.close()
            throw Self.error(error.code, path: url.path, needed: 0)
        }
    }

    deinit { close() }

    /// Appends all of `bytes`, retrying short writes and `EINTR`.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(KioskError) {
        do {
            try file.write(bytes)
        } catch {
            throw Self.error(error.code, path: path, needed: Int64(bytes.count))
        }
    }

    /// Writes all of `bytes` at `offset` (`pwrite(2)`), retrying short writes and `EINTR`.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(KioskError) {
        do {
            try file.write(bytes, at: offset)
        } catch {
            throw Self.error(error.code, path: path, needed: Int64(bytes.count))
        }
    }

    /// `fsync(2)` of the file.
    public func synchronize() throws(KioskError) {
        do {
            try file.synchronize()
        } catch {
            throw Self.error(error.code, path: path, needed: 0)
        }
    }

    /// Closes the descriptor (idempotent).
    public func close() { file.close() }

    static func error(_ code: Int32, path: String, needed: Int64) -> KioskError {
        if code == ENOSPC || code == EDQUOT { return .insufficientStorage(needed: needed, available: nil) }
        if code == ELOOP {
            return .fileSystem(path: path, underlying: "refused to follow a symbolic link in the cache")
        }
        return .fileSystem(path: path, underlying: String(cString: strerror(code)))
    }
}
