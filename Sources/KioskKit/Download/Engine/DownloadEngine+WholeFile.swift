import Crypto
import Foundation
import KioskCore

extension DownloadEngine {
    /// Fetches one file (resuming its part) and verifies it, holding a connection permit while its requests run.
    /// Never throws: what it changed (already checkpointed, in order) and how it ended come back in the outcome,
    /// for the engine to apply to its ``DownloadWork``. A wrong hash deletes the file and is counted
    /// (``IntegrityCounts``); the first time, the fetch ends with a need of a new grant (the file may have changed on
    /// the server).
    func fetchAndVerify(_ job: FileJob, tally: ProgressTally, hooks: EngineHooks) async -> FileOutcome {
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
    func fetchAndVerify(
        _ job: FileJob, outcome: inout FileOutcome, tally: ProgressTally, hooks: EngineHooks
    ) async throws -> GrantNeed? {
        let file = job.file
        let grant = job.grant
        let source = try ContentSource.of(file, in: grant, api: api)
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
                    job, chunks: chunks, source: source, into: positional, outcome: &outcome, tally: tally,
                    hooks: hooks)
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
                    source: source, offset: have, expectedLength: file.length, entityTag: entityTag, partURL: part)
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
                outcome.changes.append(
                    try await commitVerified(file, part: part, final: final, bytes: unsynced, hooks: hooks))
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

    /// Whether a file found complete under its final name in staging (a crash between its rename and its record) has
    /// the granted bytes: for a file fetched by chunks, the chunks not journaled as verified are hashed (the others
    /// are proven already); otherwise the whole file is.
    func stagedFileMatches(_ url: URL, file: GrantFile, chunks: [GrantChunk]?, verified: Set<Int>) -> Bool {
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

}
