import Foundation

@testable import KioskKit

/// The real file system, counting every call KioskKit makes through it (calls on open files included), and
/// optionally holding file fsyncs at a gate.
final class CountingFileSystem: KioskFileSystem {
    /// The calls counted.
    enum Call: String, Sendable, CaseIterable {
        case status, linkStatus, makeDirectory, open, rename, move, remove, contentsOfDirectory, synchronizeDirectory
        case write, read, truncate, synchronize, close
    }

    private let real = POSIXFileSystem()
    private let counts = Locked<[Call: Int]>([:])
    private let readBytes = Locked<Int64>(0)
    private let readPlaces = Locked((onTransferExecutor: 0, elsewhere: 0))
    /// Called before each file fsync (not a folder's): a test may block there to hold the journal's writer.
    let beforeSynchronize = Locked<(@Sendable () -> Void)?>(nil)

    /// How many calls of each kind so far.
    var snapshot: [Call: Int] { counts.withLock { $0 } }

    /// The calls of one kind so far.
    func count(_ call: Call) -> Int { counts.withLock { $0[call, default: 0] } }

    /// The calls of all kinds so far.
    var total: Int { counts.withLock { $0.values.reduce(0, +) } }

    /// The bytes read back from files so far (what re-hashing a part or a staged file costs).
    var bytesRead: Int64 { readBytes.withLock { $0 } }

    /// The reads so far on ``TransferExecutor``'s queue, and elsewhere (the cooperative pool, or another thread).
    var reads: (onTransferExecutor: Int, elsewhere: Int) { readPlaces.withLock { $0 } }

    func reset() {
        counts.withLock { $0 = [:] }
        readBytes.withLock { $0 = 0 }
        readPlaces.withLock { $0 = (0, 0) }
    }

    fileprivate func note(_ call: Call) { counts.withLock { $0[call, default: 0] += 1 } }

    fileprivate func noteRead(_ count: Int) -> Int {
        readBytes.withLock { $0 += Int64(max(0, count)) }
        var onExecutor = false
        if #available(macOS 15, iOS 18, tvOS 18, visionOS 2, *) { onExecutor = TransferExecutor.isCurrent }
        readPlaces.withLock { onExecutor ? ($0.onTransferExecutor += 1) : ($0.elsewhere += 1) }
        return count
    }

    func status(_ url: URL) -> FileStatus? {
        note(.status)
        return real.status(url)
    }

    func linkStatus(_ path: String) -> FileStatus? {
        note(.linkStatus)
        return real.linkStatus(path)
    }

    func makeDirectory(_ path: String) throws(SystemCallError) {
        note(.makeDirectory)
        try real.makeDirectory(path)
    }

    func open(_ url: URL, mode: FileOpenMode) throws(SystemCallError) -> any KioskFile {
        note(.open)
        return CountingFile(try real.open(url, mode: mode), owner: self)
    }

    func rename(_ from: URL, to: URL) throws(SystemCallError) {
        note(.rename)
        try real.rename(from, to: to)
    }

    func move(_ from: URL, to: URL) throws(SystemCallError) {
        note(.move)
        try real.move(from, to: to)
    }

    func remove(_ url: URL) {
        note(.remove)
        real.remove(url)
    }

    func contentsOfDirectory(_ url: URL) -> [String]? {
        note(.contentsOfDirectory)
        return real.contentsOfDirectory(url)
    }

    func synchronizeDirectory(_ url: URL) {
        note(.synchronizeDirectory)
        real.synchronizeDirectory(url)
    }
}

/// An open file of a ``CountingFileSystem``.
private final class CountingFile: KioskFile {
    let file: any KioskFile
    let owner: CountingFileSystem

    init(_ file: any KioskFile, owner: CountingFileSystem) {
        self.file = file
        self.owner = owner
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
        owner.note(.write)
        try file.write(bytes)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int {
        owner.note(.read)
        return owner.noteRead(try file.read(into: buffer))
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(SystemCallError) {
        owner.note(.write)
        try file.write(bytes, at: offset)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemCallError) -> Int {
        owner.note(.read)
        return owner.noteRead(try file.read(into: buffer, at: offset))
    }

    func truncate(to length: Int64) throws(SystemCallError) {
        owner.note(.truncate)
        try file.truncate(to: length)
    }

    func synchronize() throws(SystemCallError) {
        owner.beforeSynchronize.withLock { $0 }?()
        owner.note(.synchronize)
        try file.synchronize()
    }

    func close() {
        owner.note(.close)
        file.close()
    }
}
