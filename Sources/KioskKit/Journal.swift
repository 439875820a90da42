import Foundation
import KioskCore

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the journal keeps about one download. The proof of purchase is kept so that an expired grant can be
/// renewed after a relaunch; it is never logged.
struct DownloadRecord: Sendable, Hashable, Codable {
    var id: DownloadID
    var productID: String
    /// The receipt paying for the download, when the proof is a receipt (the only key journals had before signed
    /// transactions, so they still read).
    var receipt: String?
    /// The StoreKit 2 signed transaction paying for the download, when the proof is one.
    var signedTransaction: String?
    var priority: DownloadPriority
    /// Enqueue order, for FIFO within a priority.
    var sequence: UInt64
    var state: DownloadState
    var attempt: Int
    /// The current grant (its version is the download's version), once asked for.
    var grant: Grant?
    /// When ``grant`` was received: it is trusted for at most ``GrantLimits/maximumTrust`` after that. Journals
    /// written before this key existed have none, and their grant is renewed before use.
    var grantReceivedAt: Date? = nil
    /// The `ETag` of each file's first response, sent back as `If-Range`.
    var entityTags: [String: String]
    /// Files downloaded and verified against the grant (renamed from `.part` in staging).
    var verifiedPaths: Set<String>
    /// How many times a file failed verification (one retry, then an integrity error).
    var integrityFailures: [String: Int]
    var createdAt: Date

    /// The proof of purchase, as stored in ``receipt`` or ``signedTransaction``.
    var proof: PurchaseProof {
        get { signedTransaction.map(PurchaseProof.signedTransaction) ?? .receipt(receipt ?? "") }
        set {
            switch newValue {
            case .receipt(let text): (receipt, signedTransaction) = (text, nil)
            case .signedTransaction(let text): (receipt, signedTransaction) = (nil, text)
            }
        }
    }
}

extension DownloadRecord {
    /// The record without its grant when the grant fails today's checks (``GrantValidation``): a grant journaled by
    /// an older, laxer KioskKit, for example with a content URL outside its product. The download then resumes with
    /// a fresh grant. Files already verified stay on disk in staging and are kept once their SHA-256 matches the
    /// fresh grant; `If-Range` validators are kept, so a part of a file that changed starts over.
    func droppingUnsafeGrant(limits: GrantLimits) -> DownloadRecord {
        guard let grant else { return self }
        do {
            try GrantValidation.validate(grant, productID: productID, limits: limits)
            return self
        } catch {
            var record = self
            record.grant = nil
            record.grantReceivedAt = nil
            record.verifiedPaths = []
            record.entityTags = entityTags.filter { Identifiers.isValidFilePath($0.key) }
            record.integrityFailures = integrityFailures.filter { Identifiers.isValidFilePath($0.key) }
            return record
        }
    }
}

/// The journal's content: the queue, each download's state, and the installed content.
struct JournalSnapshot: Sendable, Hashable, Codable {
    static let currentFormat = 1

    var format: Int = JournalSnapshot.currentFormat
    var nextSequence: UInt64 = 0
    var downloads: [DownloadRecord] = []
    var installed: [InstalledContent] = []
}

/// Reads and writes the journal atomically: write a temporary file, fsync it, keep the previous copy, rename,
/// fsync the folder. Reading never crashes: a torn or corrupt journal falls back to the previous good copy, and
/// without one the installed content is rebuilt from the disk.
struct Journal: Sendable {
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

    let layout: CacheLayout

    var url: URL { layout.journal }
    var previousURL: URL { layout.root.appendingPathComponent("journal.prev.json") }
    var temporaryURL: URL { layout.root.appendingPathComponent("journal.json.tmp") }

    /// Loads the journal, recovering from whatever state a crash left.
    func load() -> (JournalSnapshot, Recovery) {
        let fileManager = FileManager.default
        try? fileManager.removeItem(at: temporaryURL)  // a write that never reached its rename
        if let snapshot = Self.read(url) { return (snapshot, .loaded) }
        let journalExisted = fileManager.fileExists(atPath: url.path)
        if let snapshot = Self.read(previousURL) { return (snapshot, .previousCopy) }
        let rebuilt = JournalSnapshot(installed: Self.scanInstalledContent(layout))
        return (rebuilt, journalExisted || fileManager.fileExists(atPath: previousURL.path) ? .rebuiltFromDisk : .fresh)
    }

    /// Writes the snapshot atomically and durably.
    func save(_ snapshot: JournalSnapshot) throws(KioskError) {
        let data: Data
        do {
            let encoder = KioskJSON.makeEncoder()
            data = try encoder.encode(snapshot)
        } catch {
            throw .journal("encoding failed: \(error)")
        }
        do {
            try FileManager.default.createDirectory(at: layout.root, withIntermediateDirectories: true)
            try Self.writeDurably(data, to: temporaryURL)
            if FileManager.default.fileExists(atPath: url.path) {
                // Keep the last good copy: if the rename below is torn, load() falls back to it.
                _ = url.withUnsafeFileSystemRepresentation { from in
                    previousURL.withUnsafeFileSystemRepresentation { to in rename(from!, to!) }
                }
            }
            let renamed = temporaryURL.withUnsafeFileSystemRepresentation { from in
                url.withUnsafeFileSystemRepresentation { to in rename(from!, to!) }
            }
            guard renamed == 0 else { throw KioskError.journal("rename failed: \(String(cString: strerror(errno)))") }
            Self.syncDirectory(layout.root)
        } catch let error as KioskError {
            throw error
        } catch {
            throw .journal("\(error)")
        }
    }

    static func read(_ url: URL) -> JournalSnapshot? {
        guard let data = try? Data(contentsOf: url), !data.isEmpty,
              let snapshot = try? KioskJSON.decode(JournalSnapshot.self, from: data),
              snapshot.format <= JournalSnapshot.currentFormat
        else { return nil }
        return snapshot
    }

    static func writeDurably(_ data: Data, to url: URL) throws(KioskError) {
        let fd = CacheFiles.createFresh(url)
        guard fd >= 0 else { throw .journal("cannot open \(url.lastPathComponent): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var failure: Int32 = 0
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += written
            }
        }
        if failure != 0 {
            if failure == ENOSPC { throw .insufficientStorage(needed: Int64(data.count), available: nil) }
            throw .journal("write failed: \(String(cString: strerror(failure)))")
        }
        guard fsync(fd) == 0 else { throw .journal("fsync failed: \(String(cString: strerror(errno)))") }
    }

    static func syncDirectory(_ url: URL) {
        let fd = url.withUnsafeFileSystemRepresentation { open($0!, O_RDONLY) }
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// Installed content found under `Content/<product_id>/<version>/` (hashes unknown).
    static func scanInstalledContent(_ layout: CacheLayout) -> [InstalledContent] {
        let fileManager = FileManager.default
        guard let products = try? fileManager.contentsOfDirectory(atPath: layout.contentRoot.path) else { return [] }
        var found: [InstalledContent] = []
        for productID in products.sorted() where Identifiers.isValidProductID(productID) {
            let productFolder = layout.contentRoot.appendingPathComponent(productID, isDirectory: true)
            guard let versions = try? fileManager.contentsOfDirectory(atPath: productFolder.path) else { continue }
            for version in versions.sorted() where Identifiers.isValidContentVersion(version) {
                let folder = layout.content(productID: productID, version: version)
                let files = listFiles(in: folder)
                guard !files.isEmpty else { continue }
                let date = (try? fileManager.attributesOfItem(atPath: folder.path)[.modificationDate] as? Date) ?? Date()
                found.append(InstalledContent(productID: productID, version: version, directory: folder,
                                              files: files, installedAt: date))
            }
        }
        return found
    }

    static func listFiles(in folder: URL) -> [InstalledFile] {
        guard let enumerator = FileManager.default.enumerator(atPath: folder.path) else { return [] }
        var files: [InstalledFile] = []
        while let relative = enumerator.nextObject() as? String {
            let full = folder.appendingPathComponent(relative)
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: full.path),
                  attributes[.type] as? FileAttributeType == .typeRegular
            else { continue }
            let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
            files.append(InstalledFile(path: relative, length: size, sha256: ""))
        }
        return files.sorted { $0.path < $1.path }
    }
}
