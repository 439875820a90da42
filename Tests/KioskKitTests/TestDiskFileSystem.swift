import Foundation

@testable import KioskKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The real file system on a disk that fills up and whose fsyncs can be held: once ``budget`` bytes have been written
/// (through any open file), a write writes what fits and fails with `ENOSPC`, as `write(2)` does (`nil` is an empty
/// disk again); ``beforeSynchronize`` runs before each file's fsync, where a test may hold the journal's writer.
final class TestDiskFileSystem: KioskFileSystem {
    private let real = POSIXFileSystem()
    let budget = Locked<Int?>(nil)
    let beforeSynchronize = Locked<(@Sendable () -> Void)?>(nil)

    /// Takes up to `count` bytes of the budget; how many fit.
    fileprivate func reserve(_ count: Int) -> Int {
        budget.withLock { budget in
            guard let left = budget else { return count }
            let fits = min(left, count)
            budget = left - fits
            return fits
        }
    }

    func status(_ url: URL) -> FileStatus? { real.status(url) }
    func linkStatus(_ path: String) -> FileStatus? { real.linkStatus(path) }
    func makeDirectory(_ path: String) throws(SystemCallError) { try real.makeDirectory(path) }
    func open(_ url: URL, mode: FileOpenMode) throws(SystemCallError) -> any KioskFile {
        FillingFile(inner: try real.open(url, mode: mode), disk: self)
    }
    func rename(_ from: URL, to: URL) throws(SystemCallError) { try real.rename(from, to: to) }
    func move(_ from: URL, to: URL) throws(SystemCallError) { try real.move(from, to: to) }
    func remove(_ url: URL) { real.remove(url) }
    func contentsOfDirectory(_ url: URL) -> [String]? { real.contentsOfDirectory(url) }
    func synchronizeDirectory(_ url: URL) { real.synchronizeDirectory(url) }
}

private final class FillingFile: KioskFile {
    let inner: any KioskFile
    let disk: TestDiskFileSystem

    init(inner: any KioskFile, disk: TestDiskFileSystem) {
        self.inner = inner
        self.disk = disk
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
        let fits = disk.reserve(bytes.count)
        try inner.write(UnsafeRawBufferPointer(rebasing: bytes[0..<fits]))
        if fits < bytes.count { throw SystemCallError(code: ENOSPC) }
    }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(SystemCallError) {
        let fits = disk.reserve(bytes.count)
        try inner.write(UnsafeRawBufferPointer(rebasing: bytes[0..<fits]), at: offset)
        if fits < bytes.count { throw SystemCallError(code: ENOSPC) }
    }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int {
        try inner.read(into: buffer)
    }
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemCallError) -> Int {
        try inner.read(into: buffer, at: offset)
    }
    func truncate(to length: Int64) throws(SystemCallError) { try inner.truncate(to: length) }
    func synchronize() throws(SystemCallError) {
        disk.beforeSynchronize.withLock { $0 }?()
        try inner.synchronize()
    }
    func close() { inner.close() }
}
