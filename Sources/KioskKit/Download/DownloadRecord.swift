import Foundation
import KioskCore

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
    /// The chunks verified and durable in each file's part, by index in the grant's chunk list, for files not yet
    /// verified whole. Optional so that journals written before chunks read (they have none).
    var chunks: [String: Set<Int>]? = nil
    /// The bytes of each file copied from the installed version rather than fetched (a file copied whole, or the
    /// chunks of it reused), for files verified or with verified chunks. Optional so that journals written before
    /// updates reused bytes read (they have none).
    var reused: [String: Int64]? = nil
    /// Whether the app asked to keep the installed version when this download installs another one (see
    /// ``KioskClient/update(productID:proof:priority:keepingPrevious:)``): it is moved to
    /// ``CacheLayout/kept(productID:version:)`` instead of being deleted. Optional so that journals written before it
    /// read (`nil`: deleted).
    var keepsPrevious: Bool? = nil
    /// How far the chunks in flight of each file are verified (``ChunkPrefix``). Optional so that journals written
    /// before it read (they have none: those chunks start over).
    var prefixes: [String: [ChunkPrefix]]? = nil

    /// ``prefixes``, empty when absent.
    var chunkPrefixes: [String: [ChunkPrefix]] {
        get { prefixes ?? [:] }
        set { prefixes = newValue.isEmpty ? nil : newValue }
    }

    /// ``reused``, empty when absent.
    var reusedBytes: [String: Int64] {
        get { reused ?? [:] }
        set { reused = newValue.isEmpty ? nil : newValue }
    }

    /// ``chunks``, empty when absent.
    var verifiedChunks: [String: Set<Int>] {
        get { chunks ?? [:] }
        set { chunks = newValue.isEmpty ? nil : newValue }
    }

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
            record.verifiedChunks = [:]
            record.reusedBytes = [:]
            record.chunkPrefixes = [:]
            record.entityTags = entityTags.filter { Identifiers.isValidFilePath($0.key) }
            record.integrityFailures = integrityFailures.filter { Identifiers.isValidFilePath($0.key) }
            return record
        }
    }
}

/// The per-file state of a download that the engine changes and the journal records: the grant and each file's
/// fate. ``DownloadRecord`` (the journal's value) and ``DownloadWork`` (the engine's) both have it, and both apply
/// a ``DownloadChange`` the same way.
protocol DownloadFileState {
    var grant: Grant? { get set }
    var grantReceivedAt: Date? { get set }
    var entityTags: [String: String] { get set }
    var verifiedPaths: Set<String> { get set }
    var integrityFailures: [String: Int] { get set }
    /// The chunks verified in each part file (see ``DownloadRecord/chunks``).
    var verifiedChunks: [String: Set<Int>] { get set }
    /// The bytes of each file copied from the installed version (see ``DownloadRecord/reused``).
    var reusedBytes: [String: Int64] { get set }
    /// How far the chunks in flight of each file are verified (see ``DownloadRecord/prefixes``).
    var chunkPrefixes: [String: [ChunkPrefix]] { get set }
}

/// One change to a download's per-file state: what a journal checkpoint appends, instead of the whole record.
enum DownloadChange: Sendable, Hashable, Codable {
    /// A new grant (or none). What is kept about files the new grant does not list is dropped; `nil` drops all.
    case grant(Grant?, receivedAt: Date?)
    /// A file was downloaded, verified and made durable in staging. `reused`: its bytes, when it was copied whole
    /// from the installed version instead of fetched (absent for a fetched file, or one assembled from chunks, whose
    /// chunk records count what they reused).
    case verified(path: String, reused: Int64? = nil)
    /// The `ETag` of a file's first response (`nil` to forget it).
    case entityTag(path: String, tag: String?)
    /// How many times a file failed verification (`nil` to forget it).
    case integrityFailures(path: String, count: Int?)
    /// A file's bytes were deleted: it is no longer verified and its validator and failures are forgotten.
    case discarded(path: String)
    /// Chunk `index` of a file (in the grant's chunk list) was fetched, verified and made durable in its part file.
    /// `reused`: its bytes, when it was copied from the installed version instead of fetched (absent when fetched).
    case chunkVerified(path: String, index: Int, reused: Int64? = nil)
    /// A chunk of a file, still in flight, is verified up to `prefix.bytes` (it replaces any earlier prefix of the
    /// same chunk).
    case chunkProgress(path: String, prefix: ChunkPrefix)

    /// The file the change is about; `nil` for a grant change.
    var path: String? {
        switch self {
        case .grant: nil
        case .verified(let path, _), .entityTag(let path, _), .integrityFailures(let path, _), .discarded(let path),
            .chunkVerified(let path, _, _), .chunkProgress(let path, _):
            path
        }
    }
}

extension DownloadFileState {
    /// Applies one change. Costs O(1), except a grant change, which costs O(files of the grant).
    mutating func apply(_ change: DownloadChange) {
        switch change {
        case .grant(let new, let receivedAt):
            let old = grant
            grant = new
            grantReceivedAt = receivedAt
            guard let new else {
                verifiedPaths = []
                verifiedChunks = [:]
                reusedBytes = [:]
                chunkPrefixes = [:]
                entityTags = [:]
                integrityFailures = [:]
                return
            }
            let paths = Set(new.files.map(\.path))
            if !verifiedChunks.isEmpty { verifiedChunks = Self.chunksStillValid(verifiedChunks, old: old, new: new) }
            verifiedPaths.formIntersection(paths)
            if !chunkPrefixes.isEmpty {
                chunkPrefixes = chunkPrefixes.filter { paths.contains($0.key) && !verifiedPaths.contains($0.key) }
            }
            entityTags = entityTags.filter { paths.contains($0.key) }
            integrityFailures = integrityFailures.filter { paths.contains($0.key) }
            if !reusedBytes.isEmpty {
                reusedBytes = reusedBytes.filter { verifiedPaths.contains($0.key) || verifiedChunks[$0.key] != nil }
            }
        case .verified(let path, let reused):
            verifiedPaths.insert(path)
            if let reused { reusedBytes[path] = reused }
            verifiedChunks[path] = nil
            chunkPrefixes[path] = nil
            integrityFailures[path] = nil
        case .entityTag(let path, let tag):
            entityTags[path] = tag
        case .integrityFailures(let path, let count):
            integrityFailures[path] = count
        case .discarded(let path):
            verifiedPaths.remove(path)
            verifiedChunks[path] = nil
            chunkPrefixes[path] = nil
            reusedBytes[path] = nil
            entityTags[path] = nil
            integrityFailures[path] = nil
        case .chunkVerified(let path, let index, let reused):
            forgetPrefix(of: path, index: index)
            guard !verifiedPaths.contains(path), verifiedChunks[path, default: []].insert(index).inserted,
                let reused
            else { return }
            reusedBytes[path, default: 0] += reused
        case .chunkProgress(let path, let prefix):
            guard !verifiedPaths.contains(path) else { return }
            forgetPrefix(of: path, index: prefix.index)
            chunkPrefixes[path, default: []].append(prefix)
        }
    }

    /// Forgets the prefix of chunk `index` of `path`, if any (O(prefixes of the file)).
    private mutating func forgetPrefix(of path: String, index: Int) {
        guard var prefixes = chunkPrefixes[path] else { return }
        prefixes.removeAll { $0.index == index }
        chunkPrefixes[path] = prefixes.isEmpty ? nil : prefixes
    }

    /// The verified chunks that keep their meaning under the `new` grant: a chunk index names the same bytes only
    /// when the file's hash, its chunk list and the chunking are unchanged.
    private static func chunksStillValid(
        _ verified: [String: Set<Int>], old: Grant?, new: Grant
    ) -> [String: Set<Int>] {
        guard let old, old.chunking == new.chunking else { return [:] }
        var oldFiles: [String: GrantFile] = [:]
        for file in old.files where verified[file.path] != nil { oldFiles[file.path] = file }
        var kept: [String: Set<Int>] = [:]
        for file in new.files {
            guard let indexes = verified[file.path], let before = oldFiles[file.path], before.sha256 == file.sha256,
                before.chunks == file.chunks
            else { continue }
            kept[file.path] = indexes
        }
        return kept
    }

    /// The bytes of the chunks of `file` verified so far (0 for a file without verified chunks).
    func verifiedChunkLength(of file: GrantFile) -> Int64 {
        guard let indexes = verifiedChunks[file.path], let chunks = file.chunks else { return 0 }
        return indexes.reduce(Int64(0)) { $0 + (chunks.indices.contains($1) ? chunks[$1].length : 0) }
    }

    /// The bytes copied from the installed version so far, among the verified ones (O(files with reused bytes)).
    var reusedLength: Int64 { reusedBytes.values.reduce(0, +) }

    /// The bytes of the files and chunks verified so far (O(files + verified chunks): computed once when a transfer
    /// starts or a grant changes, then kept up to date file by file and chunk by chunk).
    var verifiedLength: Int64 {
        guard let grant else { return 0 }
        return grant.files.reduce(Int64(0)) {
            $0 + (verifiedPaths.contains($1.path) ? $1.length : verifiedChunkLength(of: $1))
        }
    }
}

extension DownloadRecord: DownloadFileState {}
