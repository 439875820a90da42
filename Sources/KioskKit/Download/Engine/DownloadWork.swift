import Crypto
import Foundation
import KioskCore

/// What a running download knows and the journal keeps between state changes: the grant and each file's fate.
struct DownloadWork: Sendable, Hashable, DownloadFileState {
    var productID: String
    var proof: PurchaseProof
    var grant: Grant?
    /// When ``grant`` arrived (it is trusted for at most ``GrantLimits/maximumTrust`` after that).
    var grantReceivedAt: Date?
    var entityTags: [String: String]
    var verifiedPaths: Set<String>
    var integrityFailures: [String: Int]
    /// The chunks verified in each part file, by index (see ``DownloadRecord/chunks``).
    var verifiedChunks: [String: Set<Int>] = [:]
    /// The bytes of each file copied from the installed version (see ``DownloadRecord/reused``).
    var reusedBytes: [String: Int64] = [:]
    /// How far the chunks in flight of each file are verified (see ``DownloadRecord/prefixes``).
    var chunkPrefixes: [String: [ChunkPrefix]] = [:]
    /// The product's installed content when the transfer started (not journaled): when the grant names the same
    /// version, there is nothing to download.
    var installed: InstalledContent? = nil
    /// The bytes of ``verifiedPaths`` and ``verifiedChunks`` (not journaled): kept up to date as files and chunks are
    /// verified, so that progress never scans the product's files.
    var verifiedBytes: Int64 = 0

    /// Applies `change` and keeps ``verifiedBytes`` up to date. A verified file or chunk costs O(1) (plus the file's
    /// verified chunks, for a file fetched by chunks): the engine passes the file; a grant change recounts; a
    /// discarded file (grant renewals only) looks its length up.
    mutating func record(_ change: DownloadChange, file: GrantFile? = nil) {
        var delta: Int64 = 0
        switch change {
        case .verified(let path, _) where !verifiedPaths.contains(path):
            if let file { delta = file.length - verifiedChunkLength(of: file) }
        case .discarded(let path):
            if let file = file ?? grant?.files.first(where: { $0.path == path }) {
                delta = -(verifiedPaths.contains(path) ? file.length : verifiedChunkLength(of: file))
            }
        case .chunkVerified(let path, let index, _)
        where !verifiedPaths.contains(path) && verifiedChunks[path]?.contains(index) != true:
            if let chunks = file?.chunks, chunks.indices.contains(index) { delta = chunks[index].length }
        default: break
        }
        apply(change)
        if case .grant = change { verifiedBytes = verifiedLength } else { verifiedBytes += delta }
    }
}
