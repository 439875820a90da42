import Foundation
import KioskCore

@testable import KioskKit

/// Part-file writers (POSIX underneath) that record what KioskKit writes: the writes under way at once (every write
/// of a file happens while its request holds a connection permit, so the most at once is the most requests seen
/// writing together), the writes and bytes in all, the appending writes (a file fetched whole), and the offset of
/// every positional write (chunks, and the files of a pack run). An optional delay per write makes the writes slow
/// enough to overlap.
final class ObservedWriters: Sendable {
    private struct Counts {
        var now = 0
        var most = 0
        var total = 0
        var appended = 0
        var bytes = 0
        var offsets = Set<Int64>()
    }

    private let counts = Locked(Counts())
    /// The wait before each write.
    let pace: WritePace

    /// Writers that wait `delay` seconds before each write.
    convenience init(delay: TimeInterval = 0) { self.init(pace: WritePace(delay)) }

    /// Writers that wait as `pace` says before each write.
    init(pace: WritePace) { self.pace = pace }

    /// Writes under way now.
    var now: Int { counts.withLock { $0.now } }
    /// The most writes under way at once so far.
    var most: Int { counts.withLock { $0.most } }
    /// The writes so far.
    var total: Int { counts.withLock { $0.total } }
    /// The appending writes so far.
    var appended: Int { counts.withLock { $0.appended } }
    /// The bytes written so far.
    var bytes: Int { counts.withLock { $0.bytes } }
    /// The offsets positional writes started at.
    var offsets: Set<Int64> { counts.withLock { $0.offsets } }

    var factory: FileWriterFactory {
        FileWriterFactory { url, offset throws(KioskKit.KioskError) in
            Writer(inner: try POSIXPartFileWriter(url: url, truncatingTo: offset), owner: self)
        }
    }

    /// Counts one write of `count` bytes (at `offset` for a positional one) around `write`.
    fileprivate func observe(
        _ count: Int, at offset: Int64?, _ write: () throws(KioskKit.KioskError) -> Void
    ) throws(KioskKit.KioskError) {
        counts.withLock {
            $0.now += 1
            $0.most = max($0.most, $0.now)
            $0.total += 1
            $0.bytes += count
            if let offset { $0.offsets.insert(offset) } else { $0.appended += 1 }
        }
        defer { counts.withLock { $0.now -= 1 } }
        pace.wait(writing: count)
        try write()
    }

    final class Writer: PositionalPartFileWriter {
        let inner: POSIXPartFileWriter
        let owner: ObservedWriters

        init(inner: POSIXPartFileWriter, owner: ObservedWriters) {
            self.inner = inner
            self.owner = owner
        }

        func write(_ bytes: UnsafeRawBufferPointer) throws(KioskKit.KioskError) {
            try owner.observe(bytes.count, at: nil) { () throws(KioskKit.KioskError) in try inner.write(bytes) }
        }

        func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(KioskKit.KioskError) {
            try owner.observe(bytes.count, at: offset) { () throws(KioskKit.KioskError) in
                try inner.write(bytes, at: offset)
            }
        }

        func synchronize() throws(KioskKit.KioskError) { try inner.synchronize() }
        func close() { inner.close() }
    }
}
