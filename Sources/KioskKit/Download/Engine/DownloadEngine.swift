import Crypto
import Foundation
import KioskCore

/// Runs one transfer of a download: grant, per-file ranged fetches into `.part` files, verification, grant renewal
/// keeping valid bytes. It ends with a ``TransferOutcome`` (the content staged, already installed, or a need for a
/// new grant) or a typed error, which the ``KioskClient`` hands to the ``DownloadCoordinator``: the lifecycle's
/// decisions are the machine's, and moving the content into place is the ``ContentInstaller``'s. The one rule the
/// engine applies by itself is the count of hash failures (``IntegrityCounts``), journaled through its checkpoints.
///
/// The work per file is a constant number of file-system calls, whatever the number of files: progress is kept in
/// ``DownloadWork/verifiedBytes`` and the folders already created are remembered.
struct DownloadEngine: Sendable {
    let api: APIClient
    let fetcher: FileFetcher
    let layout: CacheLayout
    let fileSystem: any KioskFileSystem
    /// The connections every download shares: each file in flight holds one permit while its requests run, and a
    /// download starts at most ``ConnectionBudget/limit`` files at once.
    let budget: ConnectionBudget
    /// Free bytes on the cache volume (`nil` when unknown).
    let availableSpace: @Sendable (URL) -> Int64?
    /// The most chunk requests of one file in flight at once (each also holds a permit of ``budget``).
    var connectionsPerFile = 4
    /// Whether runs of small files come from the grant's pack (``PackPlan``).
    var usesPacks = true
    /// The transfer blocks of chunk requests, reused from chunk to chunk (see ``TransferBlocks``).
    let rangeBlocks = BlockPool()
    /// Chunks an earlier transfer cut short, resumed from their next byte by the next one.
    let resumePoints = ChunkResumePoints()
    /// The transfer blocks of pack runs: smaller, because a run's files are written, verified and journaled as
    /// each block is written, so a run cut short on a slow link keeps all but its last block's files.
    let packBlocks = BlockPool(blockSize: PackPlan.blockSize)

    /// Fetches and verifies `work.productID` into staging, first asking for a new grant when `renewingGrant` or when
    /// the work's grant is not trusted.
    func run(_ initial: DownloadWork, renewingGrant: Bool = false, hooks: EngineHooks) async throws
        -> TransferOutcome
    {
        var work = initial
        work.verifiedBytes = work.verifiedLength
        let staging = layout.staging(productID: work.productID)
        var folders = Set<String>()
        try Task.checkCancellation()
        if renewingGrant || !Self.isTrusted(work) { try await renewGrant(&work, hooks: hooks) }
        guard let grant = work.grant else { throw KioskError.invalidResponse("no grant") }
        if let installed = work.installed, installed.version == grant.contentVersion,
            case .intact = ContentReconciler.check(installed, fileSize: fileSystem.fileSize)
        {
            fileSystem.remove(staging)
            return .alreadyInstalled(installed)
        }
        try createDirectory(staging, known: &folders)
        var onDisk = removeStrays(in: staging, grant: grant)
        try await forgetWhatIsMissingOnDisk(&work, onDisk: onDisk, hooks: hooks)

        // Disk space: the bytes still to fetch must fit (a part file already on disk is counted as missing).
        hooks.progress(work.verifiedBytes, grant.totalLength)
        let needed = grant.totalLength - work.verifiedBytes
        if needed > 0, let available = availableSpace(layout.root), available < needed {
            throw KioskError.insufficientStorage(needed: needed, available: available)
        }

        // Up to the budget's limit of files in flight; each holds a permit only while its request runs, so the
        // downloads in flight share the connections. The journal records each file as it is verified, in the
        // order they complete. A file that needs a new grant stops new starts; the files in flight finish
        // (their bytes are kept), then the run ends for the coordinator to decide about a new grant.
        let tally = ProgressTally(verified: work.verifiedBytes, expected: grant.totalLength, report: hooks.progress)
        let integrity = Locked(IntegrityCounts(files: work.integrityFailures))
        // An update, or installed content of this version that lost files (a purge; intact content returned above):
        // what the installed files already have is copied, not fetched (UpdateSeeding).
        if let installed = work.installed {
            do {
                try await seed(
                    &work, from: installed, grant: grant, onDisk: &onDisk, folders: &folders, tally: tally,
                    hooks: hooks)
            } catch {
                throw storageFigures(error, work: work, grant: grant)
            }
        }
        var renewal: GrantNeed?
        // Runs of small files with nothing on disk yet come from the pack, one request per run.
        let packURL = try (usesPacks ? PackPlan.path(of: grant) : nil).map { try api.url($0) }
        let packOffsets = packURL == nil ? [] : PackPlan.offsets(of: grant.files)
        let isPackable = { (file: GrantFile) -> Bool in
            file.length <= PackPlan.maximumFileLength && !work.verifiedPaths.contains(file.path)
                && GrantValidation.chunks(of: file, in: grant) == nil && onDisk[file.path] == nil
                && onDisk[file.path + ".part"] == nil
        }
        try await withThrowingTaskGroup(of: [FileOutcome].self) { group in
            var index = 0
            var running = 0
            while true {
                while running < budget.limit, renewal == nil, index < grant.files.count {
                    if let packURL, let run = PackPlan.run(from: index, in: grant.files, isPackable: isPackable) {
                        for file in grant.files[run] {
                            try createDirectory(
                                layout.partFile(productID: work.productID, path: file.path).deletingLastPathComponent(),
                                known: &folders)
                        }
                        let job = PackJob(
                            files: Array(grant.files[run]), start: packOffsets[run.lowerBound], url: packURL,
                            grant: grant, grantReceivedAt: work.grantReceivedAt, productID: work.productID,
                            integrity: integrity)
                        group.addTask { await fetchPack(job, tally: tally, hooks: hooks) }
                        running += 1
                        index = run.upperBound
                        continue
                    }
                    let file = grant.files[index]
                    index += 1
                    guard !work.verifiedPaths.contains(file.path) else { continue }
                    let folder = layout.partFile(productID: work.productID, path: file.path)
                        .deletingLastPathComponent()
                    try createDirectory(folder, known: &folders)
                    let job = FileJob(
                        file: file, grant: grant, grantReceivedAt: work.grantReceivedAt,
                        productID: work.productID, entityTag: work.entityTags[file.path],
                        finalSize: onDisk[file.path], partSize: onDisk[file.path + ".part"] ?? 0,
                        verifiedChunks: work.verifiedChunks[file.path] ?? [],
                        verifiedChunkBytes: work.verifiedChunkLength(of: file), integrity: integrity,
                        chunkPrefixes: work.chunkPrefixes[file.path] ?? [])
                    group.addTask { [await fetchAndVerify(job, tally: tally, hooks: hooks)] }
                    running += 1
                }
                guard let outcomes = try await group.next() else { break }
                running -= 1
                var failure: (any Error)?
                for outcome in outcomes {
                    for change in outcome.changes { work.record(change, file: outcome.file) }
                    switch outcome.stop {
                    case nil:
                        break
                    case .needsNewGrant(let reason):
                        // Token expired or version gone: a new grant keeps every byte still valid (GrantRenewal).
                        // Bytes that did not match: the new grant tells whether the file changed on the server.
                        renewal = renewal ?? reason
                    case .failed(let error):
                        failure = failure ?? error
                    }
                }
                if let failure { throw storageFigures(failure, work: work, grant: grant) }
            }
        }
        if let renewal { return .needsNewGrant(renewal) }
        await hooks.durable()
        return .staged
    }

    /// `error` with, when it is a full disk met while writing, the figures the check before the download gives: the
    /// bytes still to fetch and the space available now. A write knows neither (only its own bytes), and an app that
    /// tells the user how much to free needs both.
    private func storageFigures(_ error: any Error, work: DownloadWork, grant: Grant) -> any Error {
        guard case KioskError.insufficientStorage = error else { return error }
        return KioskError.insufficientStorage(
            needed: max(0, grant.totalLength - work.verifiedBytes), available: availableSpace(layout.root))
    }

    /// Whether the work's grant may still be used: present, before its `expires_at`, and received less than
    /// ``GrantLimits/maximumTrust`` ago.
    static func isTrusted(_ work: DownloadWork, now: Date = Date()) -> Bool {
        guard let grant = work.grant else { return false }
        return GrantValidation.trustedUntil(grant, receivedAt: work.grantReceivedAt) > now
    }

    /// Asks for a grant and applies the byte-keeping rule against the previous one.
    private func renewGrant(_ work: inout DownloadWork, hooks: EngineHooks) async throws {
        let old = work.grant
        let new = try await api.grant(productID: work.productID, proof: work.proof)
        var changes: [DownloadChange] = []
        if let old {
            let plan = GrantRenewal.plan(old: old, new: new)
            for (path, disposition) in plan.sorted(by: { $0.key < $1.key }) where disposition == .discard {
                fileSystem.remove(layout.partFile(productID: work.productID, path: path))
                fileSystem.remove(layout.stagedFile(productID: work.productID, path: path))
                changes.append(.discarded(path: path))
            }
        }
        changes.append(.grant(new, receivedAt: Date()))
        for change in changes { work.record(change) }
        await hooks.checkpoint(changes, nil, nil)
    }

    /// Forgets what the journal holds as verified but the disk no longer has (deleted or truncated behind KioskKit's
    /// back, as a purge of Caches does): a verified file whose staged copy is missing or not its length, and the
    /// verified chunks of a file whose part file no longer reaches them. They are fetched again, alone, rather than
    /// trusted, so a download never fails for good for a file it can fetch again. Nothing is read: a file or chunk
    /// journaled as verified was fsynced before its record, so a file of the right length holds it.
    /// O(files verified or with verified chunks).
    private func forgetWhatIsMissingOnDisk(
        _ work: inout DownloadWork, onDisk: [String: Int64], hooks: EngineHooks
    ) async throws {
        guard let grant = work.grant, !work.verifiedPaths.isEmpty || !work.verifiedChunks.isEmpty else { return }
        var changes: [DownloadChange] = []
        for file in grant.files {
            if work.verifiedPaths.contains(file.path) {
                if onDisk[file.path] != file.length { changes.append(.discarded(path: file.path)) }
                continue
            }
            guard let indexes = work.verifiedChunks[file.path], let chunks = file.chunks else { continue }
            let end =
                indexes.map { chunks.indices.contains($0) ? chunks[$0].offset + chunks[$0].length : .max }.max() ?? 0
            if (onDisk[file.path + ".part"] ?? 0) < end, onDisk[file.path] != file.length {
                changes.append(.discarded(path: file.path))
            }
        }
        guard !changes.isEmpty else { return }
        for change in changes { work.record(change) }
        await hooks.checkpoint(changes, nil, nil)
    }

    /// Deletes files in staging that the grant does not list (leftovers of an older version), keeping the parts of
    /// files it lists, and returns the size of what is kept by relative path. One listing per folder and one status
    /// per file present, once per run.
    private func removeStrays(in staging: URL, grant: Grant) -> [String: Int64] {
        var wanted = Set(grant.files.map(\.path))
        wanted.formUnion(grant.files.map { $0.path + ".part" })
        var kept: [String: Int64] = [:]
        for (relative, status) in fileSystem.regularFiles(under: staging) {
            if wanted.contains(relative) {
                kept[relative] = status.size
            } else {
                fileSystem.remove(staging.appendingPathComponent(relative, isDirectory: false))
            }
        }
        return kept
    }

    /// Creates a folder under the cache root once per run: `known` remembers the folders already made.
    func createDirectory(_ url: URL, known: inout Set<String>) throws {
        guard known.insert(url.path).inserted else { return }
        try CacheFiles.createDirectory(url, under: layout.root, fileSystem: fileSystem)
    }
}
