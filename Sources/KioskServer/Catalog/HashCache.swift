import Crypto
import Foundation
import KioskCore
import KioskStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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

    /// A digest, and the round (see ``retainLookedUp()``) in which it was last looked up.
    private struct Entry {
        var digest: SHA256Digest
        var round: UInt32
    }

    private var entries: [Key: Entry]
    /// The round in progress: entries looked up since the last ``retainLookedUp()`` carry it. Marking entries in
    /// place, rather than collecting the live keys in a second table, keeps a scan of 100,000 files to one table.
    private var round: UInt32 = 1
    /// The number of entries marked in this round.
    private var lookedUpCount = 0
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
    /// The file is text, one file a line: `<sha256> <size> <mtime ns> <ctime ns> <inode> <device> <path>`. It is
    /// read in 1 MiB chunks, so loading 100,000 files never holds the whole file in memory.
    init(contentsOf url: URL) {
        entries = [:]
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return }
        defer { try? handle.close() }
        var pending: [UInt8] = []
        var sawHeader = false
        // Reads one line; false when the file turns out not to be a cache of this format.
        func read(_ line: ArraySlice<UInt8>) -> Bool {
            if line.isEmpty { return true }
            guard sawHeader else {
                sawHeader = line.elementsEqual(Self.header.utf8)
                return sawHeader
            }
            if let (key, digest) = Self.entry(line) { entries[key] = Entry(digest: digest, round: 0) }
            return true
        }
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            pending.append(contentsOf: chunk)
            var start = pending.startIndex
            while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                guard read(pending[start..<newline]) else { return }
                start = newline + 1
            }
            pending.removeFirst(start)
        }
        _ = read(pending[...])
    }

    /// The key and digest in one line of the cache file, nil when it does not read.
    private static func entry(_ line: ArraySlice<UInt8>) -> (Key, SHA256Digest)? {
        let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 6, omittingEmptySubsequences: false)
        guard fields.count == 7, let digest = SHA256Digest(hexUTF8: fields[0]) else { return nil }
        let number = { (index: Int) in Int64(String(decoding: fields[index], as: UTF8.self)) }
        let unsigned = { (index: Int) in UInt64(String(decoding: fields[index], as: UTF8.self)) }
        guard let size = number(1), let modified = number(2), let changed = number(3), let inode = unsigned(4),
            let device = unsigned(5)
        else { return nil }
        let identity = FileIdentity(
            size: size, modifiedNanoseconds: modified, changedNanoseconds: changed, inode: inode, device: device)
        return (Key(path: String(decoding: fields[6], as: UTF8.self), identity: identity), digest)
    }

    /// The SHA-256 of the file at `key`, hashing it (streaming) only when the cache has no entry. The entry counts
    /// as looked up for ``retainLookedUp()``.
    mutating func digest(for key: Key) throws -> SHA256Digest {
        if let index = entries.index(forKey: key) {
            if entries.values[index].round != round {
                entries.values[index].round = round
                lookedUpCount += 1
            }
            return entries.values[index].digest
        }
        let digest = try Self.hashFile(atPath: key.path)
        entries[key] = Entry(digest: digest, round: round)
        lookedUpCount += 1
        isDirty = true
        return digest
    }

    /// Keeps only the entries looked up since the last call (the files a scan found), so deleted files do not
    /// accumulate, and starts the next round.
    mutating func retainLookedUp() {
        // Every entry looked up is kept: equal counts mean nothing is dropped.
        if lookedUpCount != entries.count {
            let current = round
            entries = entries.filter { $0.value.round == current }
            isDirty = true
        }
        round &+= 1
        lookedUpCount = 0
    }

    /// Forgets the parsed `Info.json` files whose path is not in `live` (product folders that are gone).
    mutating func retainInfos(only live: Set<String>) {
        guard infos.keys.contains(where: { !live.contains($0) }) else { return }
        infos = infos.filter { live.contains($0.key) }
    }

    /// Writes the cache atomically, readable by the owner only (it lives in the data folder): a temporary file
    /// written in 1 MiB chunks, then renamed over the cache file.
    mutating func save(to url: URL) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(
            ".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        guard
            FileManager.default.createFile(
                atPath: temporary.path, contents: nil, attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path]) }
        do {
            let handle = try FileHandle(forWritingTo: temporary)
            var buffer = Data(capacity: 1 << 20 + 4096)
            buffer.append(contentsOf: (Self.header + "\n").utf8)
            do {
                for (key, entry) in entries where !key.path.contains("\n") {
                    let identity = key.identity
                    buffer.append(
                        contentsOf:
                            "\(entry.digest.hexString) \(identity.size) \(identity.modifiedNanoseconds) \(identity.changedNanoseconds) \(identity.inode) \(identity.device) \(key.path)\n"
                            .utf8)
                    if buffer.count >= 1 << 20 {
                        try handle.write(contentsOf: buffer)
                        buffer.removeAll(keepingCapacity: true)
                    }
                }
                try handle.write(contentsOf: buffer)
            } catch {
                try? handle.close()
                throw error
            }
            try handle.close()
            guard rename(temporary.path, url.path) == 0 else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        isDirty = false
    }

    /// Streams a file through SHA-256 in 1 MiB reads.
    static func hashFile(atPath path: String) throws -> SHA256Digest {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hasher.update(data: chunk)
        }
        return SHA256Digest(hasher.finalize())
    }
}
