import Foundation
import KioskCore

/// The journal: a snapshot (`journal.json`) and an append-only log of the changes since (`journal.log`).
///
/// - **Appending** (``append(_:syncing:file:)``) never waits: entries queue, and one writer on the journal's own
///   queue takes every queued entry, fsyncs the files (several at once) and folders they asked for (a verified
///   file's bytes and the folder where it got its final name), then writes the entries and fsyncs the log once for
///   all of them (a group commit). The writer starts ``commitDelay`` after the first append, or at once when
///   ``groupSize`` entries are queued or someone waits, so that files verified close together share the fsync.
///   ``waitUntilDurable()`` and ``synchronize()`` return once everything appended before them is on disk; a producer
///   calls ``waitForRoom()`` after appending, so that at most ``maximumPending`` appends wait at once. Lines are
///   encoded straight into writes of up to ``writeSize``, never whole in memory.
/// - **Compaction**: when the log would grow past the snapshot's size (at least 256 KiB), the writer writes a new
///   snapshot atomically (temporary file, fsync, the previous copy kept as `journal.prev.json`, rename, folder
///   fsync), encoded into the file a piece at a time, with the next generation and starts an empty log of that
///   generation. Each byte of the snapshot is thus paid for by at least as many bytes of log: the cost per change
///   stays constant.
/// - **Recovery** (``load()``) reads the snapshot, then replays the log when its generation matches (a crash
///   between the new snapshot and the new log leaves a stale log, already folded into the snapshot). A torn or
///   undecodable line ends the replay: every entry before it is kept. A torn snapshot falls back to the previous
///   copy; without one the installed content is rebuilt from the disk. A format 1 journal (a snapshot without a
///   log) loads as it is and is rewritten in format 2 by the next compaction.
/// - **Paths** are relative to the cache root: installed content in the caches is kept as
///   `Content/<product>/<version>` and read back under the root where the journal is now, so a cache root that is
///   moved or copied keeps its content (``InstalledContent/journaled()``). A journal written with absolute paths
///   (before they were relative) reads the same way.
final class Journal: Sendable {
    /// Entries appended by one call, with what must be durable before them.
    private struct Append {
        var entries: [JournalEntry]
        var directory: URL?
        var file: UnsyncedFile?
        /// Whether the entries only say how far chunks in flight have come (``ChunkPrefix``).
        var isProgressOnly: Bool
    }

    /// What the writer and the appenders share.
    private struct Shared {
        var pending: [Append] = []
        /// When the oldest entry of ``pending`` was appended.
        /// When the writer must take the pending appends at the latest (see ``append(_:syncing:file:within:)``).
        var due = DispatchTime.now()
        var appended: UInt64 = 0
        var durable: UInt64 = 0
        var waiters: [(UInt64, CheckedContinuation<Void, Never>)] = []
        /// Callers of ``waitForRoom()`` waiting for the writer to take the queue.
        var roomWaiters: [CheckedContinuation<Void, Never>] = []
        var isWriting = false
    }

    /// The writer's own state, touched only on ``queue``.
    private final class WriterState: @unchecked Sendable {  // only ever touched on the journal's serial queue
        var snapshot = JournalSnapshot()
        var log: (any KioskFile)?
        var logBytes = 0
        var snapshotBytes = 0
    }

    /// How long an append may wait for others to share its fsync when nobody waits for it. A crash loses the records
    /// of about this much work plus one write; the files they named are found in staging and hashed again, not
    /// fetched again.
    static let commitDelay = DispatchTimeInterval.milliseconds(50)
    /// How long an append of chunk progress alone (``ChunkPrefix``) waits: a kill loses the bytes that arrived
    /// since the last progress written, so these go out sooner; they need no file of their own to be made durable,
    /// and the log is not fsynced for them.
    static let progressDelay = DispatchTimeInterval.milliseconds(10)
    /// Appends written at once, without waiting for ``commitDelay``.
    static let groupSize = 64

    /// Appends queued (not yet taken by the writer) beyond which ``waitForRoom()`` waits: four groups.
    static let maximumPending = 4 * groupSize

    /// The smallest log that is compacted.
    static let minimumCompactionSize = 256 << 10

    let layout: CacheLayout
    let fileSystem: any KioskFileSystem
    private let shared = Locked(Shared())
    private let writer = WriterState()
    private let queue = DispatchQueue(label: "KioskKit.Journal")

    var url: URL { layout.journal }
    var previousURL: URL { layout.root.appendingPathComponent("journal.prev.json") }
    var temporaryURL: URL { layout.root.appendingPathComponent("journal.json.tmp") }
    var logURL: URL { layout.root.appendingPathComponent("journal.log") }

    init(layout: CacheLayout, fileSystem: any KioskFileSystem = POSIXFileSystem()) {
        self.layout = layout
        self.fileSystem = fileSystem
    }

    /// Loads the journal, recovering from whatever state a crash left.
    func load() -> (JournalSnapshot, KioskClient.JournalRecovery) {
        fileSystem.remove(temporaryURL)  // a write that never reached its rename
        let result: (JournalSnapshot, KioskClient.JournalRecovery)
        if let snapshot = read(url) {
            result = (replayingLog(onto: snapshot), .loaded)
        } else if let snapshot = read(previousURL) {
            result = (replayingLog(onto: snapshot), .previousCopy)
        } else {
            let existed = fileSystem.exists(url) || fileSystem.exists(previousURL)
            let rebuilt = JournalSnapshot(installed: Self.scanInstalledContent(layout, fileSystem: fileSystem))
            result = (rebuilt, existed ? .rebuiltFromDisk : .fresh)
        }
        queue.sync { writer.snapshot = result.0.journaled() }
        return (result.0.resolved(in: layout), result.1)
    }

    /// Queues entries for the log and returns at once. `file` and `directory`, when given, are made durable before
    /// the entries are written: a verified file's bytes and the folder where it got its final name. When the file's
    /// fsync fails, its entries are dropped (the file is found and checked again on the next run). The writer takes
    /// them within ``commitDelay`` or, for chunk progress alone, ``progressDelay``, or sooner.
    func append(_ entries: [JournalEntry], syncing directory: URL? = nil, file: UnsyncedFile? = nil) {
        guard !entries.isEmpty else { return }
        let isProgressOnly = entries.allSatisfy(\.isChunkProgress)
        let entries = entries.map { $0.journaled() }
        let due = DispatchTime.now() + (isProgressOnly ? Self.progressDelay : Self.commitDelay)
        // Whether to start the writer: the first append; or one due sooner than the writer will come (an extra turn
        // of the writer on its serial queue takes whatever is pending then, and only that).
        let (start, full) = shared.withLock { shared -> (Bool, Bool) in
            let sooner = shared.pending.isEmpty || due < shared.due
            if sooner { shared.due = due }
            shared.pending.append(
                Append(entries: entries, directory: directory, file: file, isProgressOnly: isProgressOnly))
            shared.appended += 1
            let full = shared.pending.count >= Self.groupSize
            guard !shared.isWriting else { return (sooner && shared.pending.count > 1, full) }
            shared.isWriting = true
            return (true, full)
        }
        if full {
            queue.async { self.writeQueued(draining: false) }
        } else if start {
            queue.asyncAfter(deadline: due) { self.writeQueued(draining: false) }
        }
    }

    /// Returns at once while fewer than ``maximumPending`` appends wait for the writer, otherwise once the writer has
    /// taken them. A download that verifies files faster than the disk commits them waits here after each checkpoint,
    /// so that the queue stays bounded (20,000 small files verified in a burst once queued 4 MB of entries).
    func waitForRoom() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let hasRoom = shared.withLock { shared -> Bool in
                guard shared.pending.count >= Self.maximumPending else { return true }
                shared.roomWaiters.append(continuation)
                return false
            }
            if hasRoom { continuation.resume() }
        }
    }

    /// Returns once everything appended before the call is durable.
    func waitUntilDurable() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = shared.withLock { shared -> Bool in
                guard shared.durable < shared.appended else { return true }
                shared.waiters.append((shared.appended, continuation))
                return false
            }
            if resumeNow {
                continuation.resume()
            } else {
                queue.async { self.writeQueued(draining: true) }  // someone waits: no commit delay
            }
        }
    }

    /// Blocks until everything appended before the call is durable (for an install and for closing: rare).
    func synchronize() {
        queue.sync { writeQueued(draining: true) }  // after any write already started; writes whatever is queued
    }

    /// Writes `snapshot` as the whole journal at once (a compaction), with whatever was queued before dropped:
    /// the snapshot is the state. Used at launch, after recovery.
    func replace(with snapshot: JournalSnapshot) throws(KioskError) {
        let result: Result<Void, KioskError> = queue.sync {
            let roomWaiters = shared.withLock { shared in
                shared.pending = []
                defer { shared.roomWaiters = [] }
                return shared.roomWaiters
            }
            for waiter in roomWaiters { waiter.resume() }
            writer.snapshot = snapshot.journaled()
            do throws(KioskError) {
                try compact()
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    // MARK: - The writer (on `queue`)

    /// Writes every queued entry with one fsync and resumes the waiters. Then, while entries keep coming: goes on at
    /// once when `draining`, when a full group is queued, when someone waits or when the queued entries are due
    /// (``commitDelay`` after the first, or sooner); otherwise comes back then, so that the files verified meanwhile
    /// share the next fsync.
    private func writeQueued(draining: Bool) {
        while true {
            let (appends, target, roomWaiters) = shared.withLock { shared in
                let taken = (shared.pending, shared.appended, shared.roomWaiters)
                shared.pending = []
                shared.roomWaiters = []
                if taken.0.isEmpty { shared.isWriting = false }
                return taken
            }
            for waiter in roomWaiters { waiter.resume() }
            if appends.isEmpty {
                finish(upTo: target)
                return
            }
            // Data first: the files' bytes, then the folders of their names, then the records that say so.
            var entries: [JournalEntry] = []
            var directories = Set<URL>()
            for (append, synced) in zip(appends, UnsyncedFile.synchronize(appends.map(\.file))) where synced {
                entries += append.entries
                if let directory = append.directory { directories.insert(directory) }
            }
            for directory in directories { fileSystem.synchronizeDirectory(directory) }
            // A failed write closes the log; the next write compacts from the state in memory, which has these
            // entries (a full disk is retried that way at every checkpoint).
            try? write(entries, synchronizing: appends.contains { !$0.isProgressOnly })
            finish(upTo: target)
            let next = shared.withLock { shared -> DispatchTime? in
                if shared.pending.isEmpty {
                    shared.isWriting = false
                    return nil
                }
                if draining || shared.pending.count >= Self.groupSize || !shared.waiters.isEmpty { return .now() }
                return shared.due
            }
            guard let next else { return }
            if next > .now() {
                queue.asyncAfter(deadline: next) { self.writeQueued(draining: false) }
                return
            }
        }
    }

    private func finish(upTo target: UInt64) {
        let ready = shared.withLock { shared -> [CheckedContinuation<Void, Never>] in
            shared.durable = max(shared.durable, target)
            let ready = shared.waiters.filter { $0.0 <= shared.durable }.map(\.1)
            shared.waiters.removeAll { $0.0 <= shared.durable }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    /// Writes entries to the log, then fsyncs it when `synchronizing`. Chunk progress alone is written without: it
    /// guards against a stopped process, whose written lines the system keeps, and the next fsync makes it durable
    /// too (after a power loss, the part's bytes are checked against the prefix's digest anyway).
    private func write(_ entries: [JournalEntry], synchronizing: Bool = true) throws(KioskError) {
        guard !entries.isEmpty else { return }
        for entry in entries { writer.snapshot.apply(entry) }
        // The snapshot already holds these entries (applied above): a compaction needs no lines.
        guard let log = writer.log else { return try compact() }
        // The lines go to the log as they are encoded, a piece at a time, up to the size that calls for a compaction:
        // past it, writing stops and a compaction writes the state instead. A line cut short there (or by a failed
        // write) is never followed by another: the compaction starts a fresh log, and recovery drops a torn last line.
        // The lines are gathered into writes of up to ``writeSize``: a group of small entries is one write.
        let limit = max(writer.snapshotBytes, Self.minimumCompactionSize)
        var written = writer.logBytes
        var buffer = Data()
        do {
            for entry in entries {
                try JournalEncoder.encode(entry) { piece in
                    guard written + piece.count <= limit else { throw LogFull() }
                    buffer.append(contentsOf: piece)
                    written += piece.count
                    if buffer.count >= Self.writeSize {
                        try log.write(buffer)
                        buffer.removeAll(keepingCapacity: true)
                    }
                }
                guard written < limit else { throw LogFull() }
                buffer.append(0x0A)
                written += 1
            }
            try log.write(buffer)
            if synchronizing { try log.synchronize() }
        } catch is LogFull {
            return try compact()
        } catch let error as SystemCallError {
            writer.log?.close()
            writer.log = nil  // the next write compacts: a fresh snapshot and log
            if error.code == ENOSPC || error.code == EDQUOT {
                throw .insufficientStorage(needed: Int64(written - writer.logBytes), available: nil)
            }
            throw .journal("log write failed: \(error.message)")
        } catch {
            writer.log?.close()
            writer.log = nil
            throw .journal("encoding failed: \(error)")
        }
        writer.logBytes = written
    }

    /// Thrown by a log write that would grow the log past the size that calls for a compaction.
    private struct LogFull: Error {}

    /// The most bytes of log lines held before they are written.
    static let writeSize = 64 << 10

    /// Writes the writer's snapshot with the next generation, then an empty log of that generation. The snapshot is
    /// encoded straight into its file, a piece at a time.
    private func compact() throws(KioskError) {
        writer.log?.close()
        writer.log = nil
        var snapshot = writer.snapshot
        snapshot.format = JournalSnapshot.currentFormat
        snapshot.generation = (snapshot.generation ?? 0) + 1
        let header: Data
        do {
            header = try KioskJSON.makeEncoder().encode(LogHeader(generation: snapshot.generation ?? 0)) + Data([0x0A])
        } catch {
            throw .journal("encoding failed: \(error)")
        }
        try CacheFiles.createRoot(layout.root, fileSystem: fileSystem)
        var snapshotBytes = 0
        try CacheFiles.writeDurably(to: temporaryURL, fileSystem: fileSystem) { file in
            try JournalEncoder.encode(snapshot) { piece in
                try file.write(piece)
                snapshotBytes += piece.count
            }
        }
        if fileSystem.exists(url) {
            // Keep the last good copy: if the rename below is torn, load() falls back to it.
            try? fileSystem.rename(url, to: previousURL)
        }
        do {
            try fileSystem.rename(temporaryURL, to: url)
        } catch {
            throw .journal("rename failed: \(error.message)")
        }
        try CacheFiles.writeAtomically(header, to: logURL, fileSystem: fileSystem)
        fileSystem.synchronizeDirectory(layout.root)
        writer.snapshot.generation = snapshot.generation
        writer.snapshotBytes = snapshotBytes
        writer.logBytes = header.count
        do {
            writer.log = try fileSystem.open(logURL, mode: .append)
        } catch {
            throw .journal("cannot open the log: \(error.message)")
        }
    }

}
