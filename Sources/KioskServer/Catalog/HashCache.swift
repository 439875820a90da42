import Crypto
import Foundation
import KioskCore
import KioskStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The SHA-256 of every content file and of its content-defined chunks, remembered in the data directory by path
/// and ``FileIdentity`` (size, modification time, device, inode and status-change time), so that a restart or a
/// reload hashes only the files that changed, including files replaced with the same size and modification time. In
/// memory only, it also keeps each `Info.json` as parsed, by path and identity, so that a reload parses only the ones
/// that changed.
struct HashCache: Sendable {
    struct Key: Hashable, Sendable {
        var path: String
        var identity: FileIdentity
    }

    /// The first line of the cache file: the format and the chunking parameters its chunk lists were cut with.
    static let header =
        "kiosk-hash-cache 2 \(FileHashes.chunking.algorithm) \(FileHashes.chunking.minimum) "
        + "\(FileHashes.chunking.average) \(FileHashes.chunking.maximum)"
    /// The first line of a cache of the format before chunks. Its lines still load, but only those of files no
    /// longer than ``ChunkingParameters/minimum`` (one chunk, so nothing is missing); bigger files are hashed again
    /// once. A file with neither header (a JSON file of an earlier release) is not read.
    static let headerWithoutChunks = "kiosk-hash-cache 1"
    /// How a format-2 header with other chunking parameters starts: its lines load as those of a format-1 file.
    private static let chunkedHeaderPrefix = "kiosk-hash-cache 2 "

    /// What a cache file's header says about its lines.
    private enum Format {
        /// `<sha256> <size> <mtime ns> <ctime ns> <inode> <device> <path>`.
        case withoutChunks
        /// `<sha256> <size> <mtime ns> <ctime ns> <inode> <device> <chunks> <path>`; the chunk lists are reused only
        /// when they were cut with the current parameters.
        case withChunks(current: Bool)
    }

    /// The hashes, and the round (see ``retainLookedUp()``) in which they were last looked up.
    private struct Entry {
        var hashes: FileHashes
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
    /// that does not read is skipped. A file of an earlier format loads what still holds (see
    /// ``headerWithoutChunks``), and is written again in the current format at the next save.
    ///
    /// The file is text, one file a line: `<sha256> <size> <mtime ns> <ctime ns> <inode> <device> <chunks> <path>`,
    /// where `<chunks>` is `-` for a file of one chunk, otherwise `<length>:<sha256>` for each chunk, comma-separated.
    /// It is read in 1 MiB pieces, so loading 100,000 files never holds the whole file in memory.
    init(contentsOf url: URL) {
        entries = [:]
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return }
        defer { try? handle.close() }
        var pending: [UInt8] = []
        var format: Format?
        // Reads one line; false when the file turns out not to be a cache of a known format.
        func read(_ line: ArraySlice<UInt8>) -> Bool {
            if line.isEmpty { return true }
            guard let format else {
                format = Self.format(ofHeader: line)
                return format != nil
            }
            if let (key, hashes) = Self.entry(line, format: format) { entries[key] = Entry(hashes: hashes, round: 0) }
            return true
        }
        while let piece = try? handle.read(upToCount: 1 << 20), !piece.isEmpty {
            pending.append(contentsOf: piece)
            var start = pending.startIndex
            while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                guard read(pending[start..<newline]) else { return }
                start = newline + 1
            }
            pending.removeFirst(start)
        }
        _ = read(pending[...])
        // What was read from an earlier format is written again in the current one.
        let isCurrent = if case .withChunks(current: true) = format { true } else { false }
        isDirty = !isCurrent && !entries.isEmpty
    }

    /// The format a first line announces; nil for a file that is not a hash cache.
    private static func format(ofHeader line: ArraySlice<UInt8>) -> Format? {
        if line.elementsEqual(header.utf8) { return .withChunks(current: true) }
        if line.elementsEqual(headerWithoutChunks.utf8) { return .withoutChunks }
        if line.starts(with: chunkedHeaderPrefix.utf8) { return .withChunks(current: false) }
        return nil
    }

    /// The key and hashes in one line of the cache file, nil when it does not read or when its file must be hashed
    /// again (a file of several chunks whose line has no chunk list of the current parameters).
    private static func entry(_ line: ArraySlice<UInt8>, format: Format) -> (Key, FileHashes)? {
        let fieldCount = if case .withoutChunks = format { 7 } else { 8 }
        let fields = line.split(
            separator: UInt8(ascii: " "), maxSplits: fieldCount - 1, omittingEmptySubsequences: false)
        guard fields.count == fieldCount, let digest = SHA256Digest(hexUTF8: fields[0]) else { return nil }
        let number = { (index: Int) in Int64(String(decoding: fields[index], as: UTF8.self)) }
        let unsigned = { (index: Int) in UInt64(String(decoding: fields[index], as: UTF8.self)) }
        guard let size = number(1), let modified = number(2), let changed = number(3), let inode = unsigned(4),
            let device = unsigned(5)
        else { return nil }
        var chunks: [FileChunk] = []
        switch format {
        case .withChunks(current: true):
            guard let read = Self.chunks(fields[6], size: size) else { return nil }
            chunks = read
        case .withChunks(current: false), .withoutChunks:
            guard size <= FileHashes.chunking.minimum else { return nil }
        }
        let identity = FileIdentity(
            size: size, modifiedNanoseconds: modified, changedNanoseconds: changed, inode: inode, device: device)
        let path = String(decoding: fields[fieldCount - 1], as: UTF8.self)
        return (Key(path: path, identity: identity), FileHashes(digest: digest, chunks: chunks))
    }

    /// The chunk list of a cache line (`-`, or `<length>:<sha256>,…`), nil unless it is `-` for a file no longer
    /// than one chunk may be, or at least two chunks within the limits whose lengths add up to `size`.
    private static func chunks(_ field: ArraySlice<UInt8>, size: Int64) -> [FileChunk]? {
        let limits = FileHashes.chunking
        if field.elementsEqual("-".utf8) { return size <= limits.maximum ? [] : nil }
        var chunks: [FileChunk] = []
        var total: Int64 = 0
        for item in field.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            let parts = item.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
            guard parts.count == 2, let length = UInt32(String(decoding: parts[0], as: UTF8.self)),
                length > 0, length <= limits.maximum, let digest = SHA256Digest(hexUTF8: parts[1])
            else { return nil }
            chunks.append(FileChunk(length: length, digest: digest))
            total += Int64(length)
        }
        guard chunks.count >= 2, total == size else { return nil }
        return chunks
    }

    /// The SHA-256 and chunks of the file at `key`, hashing it (streaming) only when the cache has no entry. The
    /// entry counts as looked up for ``retainLookedUp()``.
    mutating func hashes(for key: Key) throws -> FileHashes {
        if let index = entries.index(forKey: key) {
            if entries.values[index].round != round {
                entries.values[index].round = round
                lookedUpCount += 1
            }
            return entries.values[index].hashes
        }
        let hashes = try Self.hashFile(atPath: key.path)
        entries[key] = Entry(hashes: hashes, round: round)
        lookedUpCount += 1
        isDirty = true
        return hashes
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
                            "\(entry.hashes.digest.hexString) \(identity.size) \(identity.modifiedNanoseconds) \(identity.changedNanoseconds) \(identity.inode) \(identity.device) "
                            .utf8)
                    Self.appendChunks(entry.hashes.chunks, to: &buffer)
                    buffer.append(contentsOf: " \(key.path)\n".utf8)
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

    /// Writes a chunk list as a cache line holds it: `-` when empty, otherwise `<length>:<sha256>,…`.
    private static func appendChunks(_ chunks: [FileChunk], to buffer: inout Data) {
        guard !chunks.isEmpty else {
            buffer.append(UInt8(ascii: "-"))
            return
        }
        for (index, chunk) in chunks.enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: ",")) }
            buffer.append(contentsOf: "\(chunk.length):\(chunk.digest.hexString)".utf8)
        }
    }
}
