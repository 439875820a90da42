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
                        verifiedChunkBytes: work.verifiedChunkLength(of: file), integrity: integrity)
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

    /// Fetches one file (resuming its part) and verifies it, holding a connection permit while its requests run.
    /// Never throws: what it changed (already checkpointed, in order) and how it ended come back in the outcome,
    /// for the engine to apply to its ``DownloadWork``. A wrong hash deletes the file and is counted
    /// (``IntegrityCounts``); the first time, the fetch ends with a need of a new grant (the file may have changed on
    /// the server).
    private func fetchAndVerify(_ job: FileJob, tally: ProgressTally, hooks: EngineHooks) async -> FileOutcome {
        var outcome = FileOutcome(file: job.file)
        do {
            if let need = try await fetchAndVerify(job, outcome: &outcome, tally: tally, hooks: hooks) {
                outcome.stop = .needsNewGrant(need)
            } else {
                tally.settle(job.file.path, adding: job.file.length - job.verifiedChunkBytes)
                return outcome
            }
        } catch {
            outcome.stop = FileOutcome.Stop(error)
        }
        // Chunks verified before the failure stay verified (journaled): they count.
        let kept = outcome.changes.reduce(Int64(0)) { total, change in
            guard case .chunkVerified(_, let index, _) = change, let chunks = job.file.chunks else { return total }
            return total + chunks[index].length
        }
        tally.settle(job.file.path, adding: kept)
        return outcome
    }

    /// Fetches and verifies one file; returns the need of a new grant that stopped it, `nil` once it is verified.
    private func fetchAndVerify(
        _ job: FileJob, outcome: inout FileOutcome, tally: ProgressTally, hooks: EngineHooks
    ) async throws -> GrantNeed? {
        let file = job.file
        let grant = job.grant
        let url = try api.contentURL(for: file, in: grant)
        let part = layout.partFile(productID: job.productID, path: file.path)
        let final = layout.stagedFile(productID: job.productID, path: file.path)
        let folder = part.deletingLastPathComponent()
        var entityTag = job.entityTag

        let chunks = GrantValidation.chunks(of: file, in: grant)
        // A crash between "renamed" and "journaled": the file is already in place; its bytes may not be durable.
        if let size = job.finalSize {
            if size == file.length, stagedFileMatches(final, file: file, chunks: chunks, verified: job.verifiedChunks) {
                outcome.changes.append(.verified(path: file.path))
                await hooks.checkpoint(
                    [.verified(path: file.path)], folder, UnsyncedFile(final, fileSystem: fileSystem))
                return nil
            }
            fileSystem.remove(final)
        }

        if let chunks {
            let writer = try fetcher.writerFactory.open(part, min(job.partSize, file.length))
            if let positional = writer as? any PositionalPartFileWriter {
                try await fetchByChunks(
                    job, chunks: chunks, url: url, into: positional, outcome: &outcome, tally: tally, hooks: hooks)
                return nil
            }
            writer.close()  // a writer that only appends: the file is fetched whole, in order
        }

        var have = job.partSize
        while true {
            try Task.checkCancellation()
            if have > file.length {
                fileSystem.remove(part)
                have = 0
            }
            var hasher = SHA256()
            if have > 0 {
                do {
                    have = try FileHashing.update(&hasher, withContentsOf: part, upTo: have, fileSystem: fileSystem)
                } catch {
                    throw KioskError.fileSystem(path: part.lastPathComponent, underlying: error.message)
                }
            }
            let digest: String
            let unsynced: UnsyncedFile
            if have == file.length {
                digest = hasher.finalize().hexString
                unsynced = UnsyncedFile(final, fileSystem: fileSystem)  // complete from an earlier run: synced by name
            } else {
                try GrantValidation.requireTrusted(grant, receivedAt: job.grantReceivedAt)
                let request = FetchRequest(
                    url: url, token: grant.token, offset: have, expectedLength: file.length,
                    entityTag: entityTag, partURL: part)
                let path = file.path
                tally.update(path, bytes: have)  // after re-hashing: the speed is measured from here
                // A validator is journaled at once only for a file that takes several requests; for the rest of a
                // file that one request brings, it is journaled only if the request fails (a kill in the middle
                // loses it: the next run resumes without `If-Range`, and the SHA-256 check catches a changed file).
                let journalsAtOnce = file.length - have > FileFetcher.segmentSize
                let unjournaled = Locked<String?>(nil)
                let fetched: FetchOutcome
                do {
                    fetched = try await budget.withPermit {
                        try await fetcher.fetch(
                            request, hasher: hasher,
                            entityTagSeen: { tag in
                                if journalsAtOnce {
                                    await hooks.checkpoint([.entityTag(path: path, tag: tag)], nil, nil)
                                } else {
                                    unjournaled.withLock { $0 = tag }
                                }
                            }
                        ) { written in
                            tally.update(path, bytes: written)
                        }
                    }
                } catch {
                    if let tag = unjournaled.withLock({ $0 }) {
                        outcome.changes.append(.entityTag(path: file.path, tag: tag))
                        await hooks.checkpoint([.entityTag(path: file.path, tag: tag)], nil, nil)
                    }
                    if let error = error as? KioskError, error.apiCode == .rangeNotSatisfiable {
                        fileSystem.remove(part)  // the part is longer than the file: start over
                        have = 0
                        entityTag = nil
                        outcome.changes.append(.entityTag(path: file.path, tag: nil))
                        await hooks.checkpoint([.entityTag(path: file.path, tag: nil)], nil, nil)
                        try await integrityFailed(
                            IntegrityFailure(
                                path: file.path, chunk: nil, expectedSHA256: file.sha256, actualSHA256: ""),
                            productID: job.productID, counts: job.integrity, hooks: hooks)
                        continue
                    }
                    throw error
                }
                if let tag = fetched.entityTag, tag != entityTag {
                    entityTag = tag
                    outcome.changes.append(.entityTag(path: file.path, tag: tag))
                }
                digest = fetched.sha256
                unsynced = fetched.unsynced
            }
            if digest == file.sha256.lowercased() {
                // The journal makes the bytes and the new name durable before the record that says "verified".
                do {
                    try fileSystem.rename(part, to: final)
                } catch {
                    throw KioskError.fileSystem(path: file.path, underlying: "could not move the verified file")
                }
                outcome.changes.append(.verified(path: file.path))
                await hooks.checkpoint([.verified(path: file.path)], folder, unsynced)
                return nil
            }
            // Wrong bytes: delete them; one retry with a new grant, then an integrity error (IntegrityCounts).
            fileSystem.remove(part)
            outcome.changes.append(.entityTag(path: file.path, tag: nil))
            await hooks.checkpoint([.entityTag(path: file.path, tag: nil)], nil, nil)
            try await integrityFailed(
                IntegrityFailure(path: file.path, chunk: nil, expectedSHA256: file.sha256, actualSHA256: digest),
                productID: job.productID, counts: job.integrity, hooks: hooks)
            return .contentMismatch(path: file.path)
        }
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

    /// Fetches the chunks of a file not yet verified, in runs of chunks next to each other (``ChunkPlan/runs``), up
    /// to ``connectionsPerFile`` runs at once (each request holding a permit of the budget), into its part file at
    /// their offsets; hashes each chunk on its own as it arrives and journals it once its bytes are durable. A chunk
    /// that does not match is counted (``IntegrityCounts``) and fetched again on its own; its second mismatch ends
    /// the transfer with an integrity error naming the file. Once every chunk is verified, the part becomes the
    /// file, without hashing it whole: the chunk hashes, which the same grant authenticates, prove its bytes.
    private func fetchByChunks(
        _ job: FileJob, chunks: [GrantChunk], url: URL, into writer: any PositionalPartFileWriter,
        outcome: inout FileOutcome, tally: ProgressTally, hooks: EngineHooks
    ) async throws {
        let file = job.file
        let grant = job.grant
        let part = layout.partFile(productID: job.productID, path: file.path)
        let final = layout.stagedFile(productID: job.productID, path: file.path)
        let pending = ChunkPlan.pending(chunkCount: chunks.count, verified: job.verifiedChunks)
        let lanes = ChunkPlan.lanes(pending: pending.count, perFile: connectionsPerFile, budget: budget.limit)
        let pendingBytes = pending.reduce(Int64(0)) { $0 + chunks[$1].length }
        // Chunks an earlier transfer cut short go on from their next byte, each at the start of a run.
        let resumePoints = self.resumePoints
        let key: @Sendable (Int) -> ChunkResumePoints.Key = { index in
            ChunkResumePoints.Key(
                part: part.path, offset: chunks[index].offset, sha256: chunks[index].sha256.lowercased())
        }
        let resumable = Locked(
            pending.reduce(into: [Int: ChunkResumePoints.Point]()) { found, index in
                found[index] = resumePoints.take(key(index))
            })
        let runs = ChunkPlan.runs(
            pending: pending, chunks: chunks,
            maximumLength: ChunkPlan.runLength(pendingBytes: pendingBytes, lanes: lanes),
            startingRunsAt: Set(resumable.withLock { $0.keys }))
        let shared = UnsyncedFile(shared: writer)
        let cursor = Locked(runs.makeIterator())
        // A lane whose grant stopped opening content (token expired, version gone) takes no new run, nor do the
        // others; the runs in flight finish, and then the need for a grant ends the transfer.
        let grantRefusal = Locked<KioskError?>(nil)
        let verified = Locked((indexes: [Int](), bytes: Int64(0)))
        let rangeBlocks = self.rangeBlocks
        let receivedAt = job.grantReceivedAt
        var failure: (any Error)?
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<lanes {
                    group.addTask {
                        while grantRefusal.withLock({ $0 == nil }), let run = cursor.withLock({ $0.next() }) {
                            // A run in one request, each chunk verified and journaled as its last byte is
                            // written; a chunk that does not match is fetched again on its own.
                            var queue = [run]
                            while let next = queue.popLast() {
                                try Task.checkCancellation()
                                do throws(KioskError) {
                                    try GrantValidation.requireTrusted(grant, receivedAt: receivedAt)
                                } catch {
                                    grantRefusal.withLock { $0 = $0 ?? error }
                                    return
                                }
                                let first = chunks[next[0]]
                                let last = chunks[next[next.count - 1]]
                                let (completions, completion) = AsyncStream.makeStream(
                                    of: (index: Int, sha256: String).self)
                                // A chunk cut short earlier: its bytes in the part, if still as received, are hashed
                                // again and the request starts after them.
                                let resuming = resumable.withLock { $0.removeValue(forKey: next[0]) }.flatMap {
                                    ChunkResumePoints.resumption($0, in: part, at: first.offset, fileSystem: fileSystem)
                                }
                                let skipped = resuming?.bytes ?? 0
                                // Each chunk's bytes go to its offset in the part, hashed on their own.
                                let splitter = SegmentSplitter(
                                    lengths: next.map { chunks[$0].length }, start: first.offset, resuming: resuming,
                                    open: { segment in
                                        let offset = chunks[next[segment]].offset
                                        return OffsetWriter(writer, at: segment == 0 ? offset + skipped : offset)
                                    },
                                    completed: { completion.yield(($0, $1)) })
                                let request = FetchRequest(
                                    url: url, token: grant.token, offset: splitter.resumeOffset,
                                    expectedLength: file.length, entityTag: nil, partURL: part,
                                    end: last.offset + last.length)
                                async let transfer = fetchSegments(
                                    request, into: splitter, blocks: rangeBlocks,
                                    requestLength: ChunkPlan.requestLength, completion: completion)
                                for await (segment, digest) in completions {
                                    let index = next[segment]
                                    let chunk = chunks[index]
                                    guard digest == chunk.sha256.lowercased() else {
                                        try await integrityFailed(
                                            IntegrityFailure(
                                                path: file.path, chunk: index, expectedSHA256: chunk.sha256,
                                                actualSHA256: digest),
                                            productID: job.productID, counts: job.integrity, hooks: hooks)
                                        queue.append([index])
                                        continue
                                    }
                                    let bytes = verified.withLock { state -> Int64 in
                                        state.indexes.append(index)
                                        state.bytes += chunk.length
                                        return state.bytes
                                    }
                                    tally.update(file.path, bytes: bytes)  // verified bytes only
                                    // The journal fsyncs the part (shared by the file's chunks) before the record.
                                    await hooks.checkpoint([.chunkVerified(path: file.path, index: index)], nil, shared)
                                }
                                // The chunks completed before a failure are verified above; a chunk cut short
                                // goes on from its next byte in a later transfer. Then a failure ends the lane.
                                let ended = await transfer
                                if let (segment, point) = splitter.cutShort {
                                    resumePoints.record(key(next[segment]), point)
                                }
                                switch ended {
                                case nil:
                                    break
                                case let refusal as KioskError where refusal.needsNewGrant:
                                    grantRefusal.withLock { $0 = $0 ?? refusal }
                                    return
                                case let failure?:
                                    throw failure
                                }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            if let refusal = grantRefusal.withLock({ $0 }) { throw refusal }
        } catch {
            failure = error
        }
        // Points no run reached stay for the next transfer.
        for (index, point) in resumable.withLock({ $0 }) { resumePoints.record(key(index), point) }
        for index in verified.withLock({ $0.indexes }) {
            outcome.changes.append(.chunkVerified(path: file.path, index: index))
        }
        if let failure { throw failure }

        // Every chunk is verified and journaled: once that is durable, the part takes its final name (a crash after
        // the rename finds the file complete, its chunks journaled, and hashes nothing).
        await hooks.durable()
        try Task.checkCancellation()
        do {
            try fileSystem.rename(part, to: final)
        } catch {
            throw KioskError.fileSystem(path: file.path, underlying: "could not move the verified file")
        }
        outcome.changes.append(.verified(path: file.path))
        await hooks.checkpoint([.verified(path: file.path)], final.deletingLastPathComponent(), shared)
    }

    /// Whether a file found complete under its final name in staging (a crash between its rename and its record) has
    /// the granted bytes: for a file fetched by chunks, the chunks not journaled as verified are hashed (the others
    /// are proven already); otherwise the whole file is.
    private func stagedFileMatches(_ url: URL, file: GrantFile, chunks: [GrantChunk]?, verified: Set<Int>) -> Bool {
        guard let chunks else {
            return (try? FileHashing.sha256(of: url, fileSystem: fileSystem)) == file.sha256.lowercased()
        }
        for index in ChunkPlan.pending(chunkCount: chunks.count, verified: verified) {
            let chunk = chunks[index]
            let digest = try? FileHashing.sha256(
                of: url, range: chunk.offset..<(chunk.offset + chunk.length), fileSystem: fileSystem)
            guard digest == chunk.sha256.lowercased() else { return false }
        }
        return true
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
