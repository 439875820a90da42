import Crypto
import Foundation
import KioskCore
import KioskStore

/// The SHA-256 of every content file, remembered in the data directory by path and ``FileIdentity`` (size,
/// modification time, device, inode and status-change time), so that a restart or a reload hashes only the files
/// that changed, including files replaced with the same size and modification time. In memory only, it also keeps
/// each `Info.json` as parsed, by path and identity, so that a reload parses only the ones that changed.
struct HashCache: Sendable {
    struct Key: Hashable, Sendable {
        var path: String
        var identity: FileIdentity
    }

    /// The first line of the cache file. A file without it (a JSON file of an earlier release) is not read: the
    /// cache starts empty and every file is hashed once.
    static let header = "kiosk-hash-cache 1"

    private var entries: [Key: String]
    private(set) var isDirty = false
    /// Parsed `Info.json` files by path, with the identity they had when parsed.
    private var infos: [String: (identity: FileIdentity, parsed: Result<ProductInfo, ContentProblem>)] = [:]

    /// An empty cache.
    init() { entries = [:] }

    /// The parsed `Info.json` at `path` (`folder` names the product folder in problems), parsed again only when its
    /// identity changed; nil when it is missing or unreadable.
    mutating func productInfo(atPath path: String, folder: String) -> Result<ProductInfo, ContentProblem>? {
        guard let identity = FileIdentity(atPath: path) else {
            infos[path] = nil
            return nil
        }
        if let known = infos[path], known.identity == identity { return known.parsed }
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let parsed = ProductInfo.parse(data, folder: folder)
        // A file changed while it was read is parsed again next time.
        if FileIdentity(atPath: path) == identity { infos[path] = (identity, parsed) }
        return parsed
    }

    /// Loads the cache file; a missing or unreadable file gives an empty cache (it is only a cache), and a line
    /// that does not read is skipped.
    ///
    /// The file is text, one file a line: `<sha256> <size> <mtime ns> <ctime ns> <inode> <device> <path>`, so that
    /// 100,000 files load and save in a fraction of a second without building a JSON tree of them in memory.
    init(contentsOf url: URL) {
        entries = [:]
        guard let data = try? Data(contentsOf: url) else { return }
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)[...]
        guard let first = lines.popFirst(), String(decoding: first, as: UTF8.self) == Self.header else { return }
        entries.reserveCapacity(lines.count)
        for line in lines {
            let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 6, omittingEmptySubsequences: false)
            guard fields.count == 7, fields[0].count == 64 else { continue }
            let number = { (index: Int) in Int64(String(decoding: fields[index], as: UTF8.self)) }
            let unsigned = { (index: Int) in UInt64(String(decoding: fields[index], as: UTF8.self)) }
            guard let size = number(1), let modified = number(2), let changed = number(3), let inode = unsigned(4),
                let device = unsigned(5)
            else { continue }
            let identity = FileIdentity(
                size: size, modifiedNanoseconds: modified, changedNanoseconds: changed, inode: inode, device: device)
            let key = Key(path: String(decoding: fields[6], as: UTF8.self), identity: identity)
            entries[key] = String(decoding: fields[0], as: UTF8.self)
        }
    }

    /// The hex SHA-256 of the file at `key`, hashing it (streaming) only when the cache has no entry.
    mutating func sha256(for key: Key) throws -> String {
        if let known = entries[key] { return known }
        let digest = try Self.hashFile(atPath: key.path)
        entries[key] = digest
        isDirty = true
        return digest
    }

    /// Keeps only the entries in `live`, so deleted files do not accumulate.
    mutating func retain(only live: Set<Key>) {
        // Every live key was looked up, so it has an entry: equal counts mean nothing else is left.
        guard entries.count > live.count else { return }
        let before = entries.count
        entries = entries.filter { live.contains($0.key) }
        if entries.count != before { isDirty = true }
    }

    /// Forgets the parsed `Info.json` files whose path is not in `live` (product folders that are gone).
    mutating func retainInfos(only live: Set<String>) {
        guard infos.keys.contains(where: { !live.contains($0) }) else { return }
        infos = infos.filter { live.contains($0.key) }
    }

    /// Writes the cache atomically, readable by the owner only (it lives in the data folder).
    mutating func save(to url: URL) throws {
        var text = Self.header + "\n"
        text.reserveCapacity(entries.count * 160)
        for (key, digest) in entries where !key.path.contains("\n") {
            let identity = key.identity
            text += "\(digest) \(identity.size) \(identity.modifiedNanoseconds) \(identity.changedNanoseconds) "
            text += "\(identity.inode) \(identity.device) \(key.path)\n"
        }
        try Data(text.utf8).write(to: url, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        isDirty = false
    }

    /// Streams a file through SHA-256 in 1 MiB reads.
    static func hashFile(atPath path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hasher.update(data: chunk)
        }
        return hasher.finalize().hexString
    }
}
