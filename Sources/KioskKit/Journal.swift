import Foundation
import KioskCore

/// The journal's content: the queue, each download's state, and the installed content.
struct JournalSnapshot: Sendable, Hashable, Codable {
    /// 1: the whole journal in `journal.json`, rewritten at every change. 2: a snapshot plus `journal.log`.
    static let currentFormat = 2

    var format: Int = JournalSnapshot.currentFormat
    var nextSequence: UInt64 = 0
    var downloads: [DownloadRecord] = []
    var installed: [InstalledContent] = []
    /// The generation of the log that continues this snapshot (format 2); a log of another generation is stale.
    var generation: UInt64? = nil

    /// Applies one log entry (O(downloads) to find the record, O(1) for the change itself but a grant's).
    mutating func apply(_ entry: JournalEntry) {
        switch entry {
        case .created(let record):
            downloads.removeAll { $0.id == record.id }
            downloads.append(record)
            nextSequence = max(nextSequence, record.sequence + 1)
        case .state(let id, let state, let attempt):
            guard let index = downloads.firstIndex(where: { $0.id == id }) else { return }
            downloads[index].state = state
            downloads[index].attempt = attempt
        case .proof(let id, let receipt, let signedTransaction, let priority):
            guard let index = downloads.firstIndex(where: { $0.id == id }) else { return }
            downloads[index].receipt = receipt
            downloads[index].signedTransaction = signedTransaction
            downloads[index].priority = priority
        case .changed(let id, let change):
            guard let index = downloads.firstIndex(where: { $0.id == id }) else { return }
            downloads[index].apply(change)
        case .forgotten(let id):
            downloads.removeAll { $0.id == id }
        case .installed(let content):
            installed.removeAll { $0.productID == content.productID }
            installed.append(content)
            installed.sort { $0.productID < $1.productID }
        case .removed(let productID):
            installed.removeAll { $0.productID == productID }
        }
    }
}

/// One change of the journal, appended to `journal.log` as one line of JSON.
///
/// JSON lines rather than a binary format: a torn append (a crash in the middle of a write) leaves a last line
/// without its newline or one that does not decode, which recovery recognises and drops; the entries reuse the
/// `Codable` records of the snapshot, so the two cannot drift apart; and a person can read the log.
enum JournalEntry: Sendable, Hashable, Codable {
    /// A new download.
    case created(DownloadRecord)
    /// A download's state and attempt count.
    case state(id: DownloadID, DownloadState, attempt: Int)
    /// A download's proof of purchase and priority (enqueued again).
    case proof(id: DownloadID, receipt: String?, signedTransaction: String?, priority: DownloadPriority)
    /// A change of a download's grant or files.
    case changed(id: DownloadID, DownloadChange)
    /// A download the client no longer keeps.
    case forgotten(id: DownloadID)
    /// A product version installed (or moved), replacing the product's previous one.
    case installed(InstalledContent)
    /// A product's installed content removed.
    case removed(productID: String)
}

/// The journal: a snapshot (`journal.json`) and an append-only log of the changes since (`journal.log`).
///
/// - **Appending** (``append(_:syncing:)``) never waits: entries queue, and one writer on the journal's own queue
///   writes every queued entry, syncs the folders the entries asked for (where verified files got their final
///   name), then fsyncs the log once for all of them (a group commit). ``waitUntilDurable()`` and
///   ``synchronize()`` return once everything appended before them is on disk.
/// - **Compaction**: when the log grows past the snapshot's size (at least 256 KiB), the writer writes a new
///   snapshot atomically (temporary file, fsync, the previous copy kept as `journal.prev.json`, rename, folder
///   fsync) with the next generation and starts an empty log of that generation. Each byte of the snapshot is
///   thus paid for by at least as many bytes of log: the cost per change stays constant.
/// - **Recovery** (``load()``) reads the snapshot, then replays the log when its generation matches (a crash
///   between the new snapshot and the new log leaves a stale log, already folded into the snapshot). A torn or
///   undecodable line ends the replay: every entry before it is kept. A torn snapshot falls back to the previous
///   copy; without one the installed content is rebuilt from the disk. A format 1 journal (a snapshot without a
///   log) loads as it is and is rewritten in format 2 by the next compaction.
final class Journal: Sendable {
    /// How the last ``load()`` obtained its snapshot.
    enum Recovery: Sendable, Hashable {
        /// No journal yet: a fresh start (installed content found on disk, if any, is taken in).
        case fresh
        /// The journal read cleanly.
        case loaded
        /// The journal was unreadable; the previous good copy was used.
        case previousCopy
        /// Neither copy was readable; the installed content was rebuilt from the disk.
        case rebuiltFromDisk
    }

    /// The log's first line.
    struct LogHeader: Codable, Hashable {
        var generation: UInt64
    }

    /// What the writer and the appenders share.
    private struct Shared {
        var pending: [JournalEntry] = []
        var directories: Set<URL> = []
        var appended: UInt64 = 0
        var durable: UInt64 = 0
        var waiters: [(UInt64, CheckedContinuation<Void, Never>)] = []
        var isWriting = false
        var lastError: KioskError?
    }

    /// The writer's own state, touched only on ``queue``.
    private final class WriterState: @unchecked Sendable {  // only ever touched on the journal's serial queue
        var snapshot = JournalSnapshot()
        var log: (any KioskFile)?
        var logBytes = 0
        var snapshotBytes = 0
    }

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

    /// The last error of a write that failed (the next compaction retries from the state in memory).
    var lastError: KioskError? { shared.withLock { $0.lastError } }

    /// Loads the journal, recovering from whatever state a crash left.
    func load() -> (JournalSnapshot, Recovery) {
        fileSystem.remove(temporaryURL)  // a write that never reached its rename
        let result: (JournalSnapshot, Recovery)
        if let snapshot = read(url) {
            result = (replayingLog(onto: snapshot), .loaded)
        } else if let snapshot = read(previousURL) {
            result = (replayingLog(onto: snapshot), .previousCopy)
        } else {
            let existed = fileSystem.exists(url) || fileSystem.exists(previousURL)
            let rebuilt = JournalSnapshot(installed: Self.scanInstalledContent(layout, fileSystem: fileSystem))
            result = (rebuilt, existed ? .rebuiltFromDisk : .fresh)
        }
        queue.sync { writer.snapshot = result.0 }
        return result
    }

    /// Queues entries for the log and returns at once. `directory`, when given, is fsynced before the entries'
    /// fsync (the folder where a verified file got its final name).
    func append(_ entries: [JournalEntry], syncing directory: URL? = nil) {
        guard !entries.isEmpty else { return }
        let start = shared.withLock { shared -> Bool in
            shared.pending += entries
            if let directory { shared.directories.insert(directory) }
            shared.appended += 1
            guard !shared.isWriting else { return false }
            shared.isWriting = true
            return true
        }
        if start { queue.async { self.writeQueued() } }
    }

    /// Returns once everything appended before the call is durable.
    func waitUntilDurable() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = shared.withLock { shared -> Bool in
                guard shared.durable < shared.appended else { return true }
                shared.waiters.append((shared.appended, continuation))
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Blocks until everything appended before the call is durable (for an install and for closing: rare).
    func synchronize() {
        queue.sync { writeQueued() }  // runs after any write already started; writes whatever is still queued
    }

    /// Writes `snapshot` as the whole journal at once (a compaction), with whatever was queued before dropped:
    /// the snapshot is the state. Used at launch, after recovery.
    func replace(with snapshot: JournalSnapshot) throws(KioskError) {
        let result: Result<Void, KioskError> = queue.sync {
            shared.withLock {
                $0.pending = []
                $0.directories = []
            }
            writer.snapshot = snapshot
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

    /// Writes every queued entry with one fsync, resumes the waiters, and repeats while entries keep coming.
    private func writeQueued() {
        while true {
            let (entries, directories, target) = shared.withLock { shared in
                let taken = (shared.pending, shared.directories, shared.appended)
                shared.pending = []
                shared.directories = []
                if taken.0.isEmpty { shared.isWriting = false }
                return taken
            }
            if entries.isEmpty {
                finish(upTo: target, error: nil)
                return
            }
            var failure: KioskError?
            do throws(KioskError) {
                try write(entries, syncing: directories)
            } catch {
                failure = error
            }
            finish(upTo: target, error: failure)
        }
    }

    private func finish(upTo target: UInt64, error: KioskError?) {
        let ready = shared.withLock { shared -> [CheckedContinuation<Void, Never>] in
            if let error { shared.lastError = error }
            shared.durable = max(shared.durable, target)
            let ready = shared.waiters.filter { $0.0 <= shared.durable }.map(\.1)
            shared.waiters.removeAll { $0.0 <= shared.durable }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    private func write(_ entries: [JournalEntry], syncing directories: Set<URL>) throws(KioskError) {
        for entry in entries { writer.snapshot.apply(entry) }
        var lines = Data()
        let encoder = KioskJSON.makeEncoder()
        do {
            for entry in entries {
                lines.append(try encoder.encode(entry))
                lines.append(0x0A)
            }
        } catch {
            throw .journal("encoding failed: \(error)")
        }
        if writer.log == nil || writer.logBytes + lines.count > max(writer.snapshotBytes, Self.minimumCompactionSize) {
            // The snapshot already holds these entries (applied above).
            for directory in directories { fileSystem.synchronizeDirectory(directory) }
            try compact()
            return
        }
        guard let log = writer.log else { return }
        do throws(SystemCallError) {
            try log.write(lines)
            for directory in directories { fileSystem.synchronizeDirectory(directory) }
            try log.synchronize()
        } catch {
            writer.log?.close()
            writer.log = nil  // the next write compacts: a fresh snapshot and log
            if error.code == ENOSPC || error.code == EDQUOT {
                throw .insufficientStorage(needed: Int64(lines.count), available: nil)
            }
            throw .journal("log write failed: \(error.message)")
        }
        writer.logBytes += lines.count
    }

    /// Writes the writer's snapshot with the next generation, then an empty log of that generation.
    private func compact() throws(KioskError) {
        writer.log?.close()
        writer.log = nil
        var snapshot = writer.snapshot
        snapshot.format = JournalSnapshot.currentFormat
        snapshot.generation = (snapshot.generation ?? 0) + 1
        let data: Data
        let header: Data
        do {
            data = try KioskJSON.makeEncoder().encode(snapshot)
            header = try KioskJSON.makeEncoder().encode(LogHeader(generation: snapshot.generation ?? 0)) + Data([0x0A])
        } catch {
            throw .journal("encoding failed: \(error)")
        }
        try CacheFiles.createRoot(layout.root, fileSystem: fileSystem)
        try CacheFiles.writeDurably(data, to: temporaryURL, fileSystem: fileSystem)
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
        writer.snapshotBytes = data.count
        writer.logBytes = header.count
        do {
            writer.log = try fileSystem.open(logURL, mode: .append)
        } catch {
            throw .journal("cannot open the log: \(error.message)")
        }
    }

    // MARK: - Reading

    func read(_ url: URL) -> JournalSnapshot? {
        guard let data = fileSystem.contents(of: url), !data.isEmpty,
            let snapshot = try? KioskJSON.decode(JournalSnapshot.self, from: data),
            snapshot.format <= JournalSnapshot.currentFormat
        else { return nil }
        return snapshot
    }

    /// The snapshot with the log's entries applied, up to the first torn or undecodable line.
    func replayingLog(onto snapshot: JournalSnapshot) -> JournalSnapshot {
        guard let generation = snapshot.generation, let data = fileSystem.contents(of: logURL) else { return snapshot }
        var result = snapshot
        var lines = data.split(separator: 0x0A, omittingEmptySubsequences: false)
        if data.last != 0x0A { lines.removeLast() }  // torn: the last line never got its newline
        guard let first = lines.first,
            (try? KioskJSON.decode(LogHeader.self, from: Data(first)))?.generation == generation
        else { return snapshot }  // a stale log: the snapshot already holds it
        for line in lines.dropFirst() where !line.isEmpty {
            guard let entry = try? KioskJSON.decode(JournalEntry.self, from: Data(line)) else { break }
            result.apply(entry)
        }
        return result
    }

    /// Installed content found under `Content/<product_id>/<version>/` (hashes unknown).
    static func scanInstalledContent(_ layout: CacheLayout, fileSystem: any KioskFileSystem) -> [InstalledContent] {
        guard let products = fileSystem.contentsOfDirectory(layout.contentRoot) else { return [] }
        var found: [InstalledContent] = []
        for productID in products.sorted() where Identifiers.isValidProductID(productID) {
            let productFolder = layout.contentRoot.appendingPathComponent(productID, isDirectory: true)
            guard let versions = fileSystem.contentsOfDirectory(productFolder) else { continue }
            for version in versions.sorted() where Identifiers.isValidContentVersion(version) {
                let folder = layout.content(productID: productID, version: version)
                let files = fileSystem.regularFiles(under: folder)
                    .map { InstalledFile(path: $0.path, length: $0.status.size, sha256: "") }
                    .sorted { $0.path < $1.path }
                guard !files.isEmpty else { continue }
                let date =
                    fileSystem.status(folder).map { Date(timeIntervalSince1970: Double($0.modified) / 1e9) } ?? Date()
                found.append(
                    InstalledContent(
                        productID: productID, version: version, directory: folder,
                        files: files, installedAt: date))
            }
        }
        return found
    }
}
