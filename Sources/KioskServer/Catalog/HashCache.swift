import Crypto
import Foundation
import KioskCore

/// The SHA-256 of every content file, remembered in the data directory by path and ``FileIdentity`` (size,
/// modification time, device, inode and status-change time), so that a restart or a reload hashes only the files
/// that changed, including files replaced with the same size and modification time.
struct HashCache: Sendable {
    struct Key: Hashable, Sendable {
        var path: String
        var identity: FileIdentity
    }

    /// One line of the cache file. A file written by a release that kept only size and modification time does not
    /// decode: the cache starts empty and every file is hashed once.
    private struct Entry: Codable {
        var path: String
        var identity: FileIdentity
        var sha256: String
    }

    private var entries: [Key: String]
    private(set) var isDirty = false

    /// An empty cache.
    init() { entries = [:] }

    /// Loads the cache file; a missing or unreadable file gives an empty cache (it is only a cache).
    init(contentsOf url: URL) {
        guard let data = try? Data(contentsOf: url), let list = try? JSONDecoder().decode([Entry].self, from: data)
        else {
            entries = [:]
            return
        }
        entries = Dictionary(
            list.map { (Key(path: $0.path, identity: $0.identity), $0.sha256) },
            uniquingKeysWith: { _, last in last })
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
        let before = entries.count
        entries = entries.filter { live.contains($0.key) }
        if entries.count != before { isDirty = true }
    }

    /// Writes the cache atomically, readable by the owner only (it lives in the data folder).
    mutating func save(to url: URL) throws {
        let list = entries.map { Entry(path: $0.key.path, identity: $0.key.identity, sha256: $0.value) }
            .sorted { $0.path < $1.path }
        try JSONEncoder().encode(list).write(to: url, options: .atomic)
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
