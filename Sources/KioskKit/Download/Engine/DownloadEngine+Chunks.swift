import Crypto
import Foundation
import KioskCore

extension DownloadEngine {
    /// Fetches the chunks of a file not yet verified, in runs of chunks next to each other (``ChunkPlan/runs``), up
    /// to ``connectionsPerFile`` runs at once (each request holding a permit of the budget), into its part file at
    /// their offsets; hashes each chunk on its own as it arrives and journals it once its bytes are durable. A chunk
    /// that does not match is counted (``IntegrityCounts``) and fetched again on its own; its second mismatch ends
    /// the transfer with an integrity error naming the file. Once every chunk is verified, the part becomes the
    /// file, without hashing it whole: the chunk hashes, which the same grant authenticates, prove its bytes.
    func fetchByChunks(
        _ job: FileJob, chunks: [GrantChunk], source: ContentSource, into writer: any PositionalPartFileWriter,
        outcome: inout FileOutcome, tally: ProgressTally, hooks: EngineHooks
    ) async throws {
        let file = job.file
        let grant = job.grant
        let part = layout.partFile(productID: job.productID, path: file.path)
        let final = layout.stagedFile(productID: job.productID, path: file.path)
        let pending = ChunkPlan.pending(chunkCount: chunks.count, verified: job.verifiedChunks)
        let lanes = ChunkPlan.lanes(pending: pending.count, perFile: connectionsPerFile, budget: budget.limit)
        let pendingBytes = pending.reduce(Int64(0)) { $0 + chunks[$1].length }
        // Chunks an earlier transfer cut short go on from their next byte, each at the start of a run: from where
        // this process left them, or where the journal says they were verified up to (a relaunch).
        let resumePoints = self.resumePoints
        let key: @Sendable (Int) -> ChunkResumePoints.Key = { index in
            ChunkResumePoints.Key(
                part: part.path, offset: chunks[index].offset, sha256: chunks[index].sha256.lowercased())
        }
        var journaled: [Int: ChunkResumePoints.Point] = [:]
        for prefix in job.chunkPrefixes where chunks.indices.contains(prefix.index) {
            let chunk = chunks[prefix.index]
            guard prefix.offset == chunk.offset, prefix.sha256 == chunk.sha256.lowercased(),
                prefix.bytes > 0, prefix.bytes < chunk.length
            else { continue }
            journaled[prefix.index] = prefix.point
        }
        let resumable = Locked(
            pending.reduce(into: [Int: ChunkResumePoints.Point]()) { found, index in
                found[index] = resumePoints.take(key(index)) ?? journaled[index]
            })
        // How far a chunk in flight is verified, for the journal.
        let prefix: @Sendable (Int, ChunkResumePoints.Point) -> DownloadChange = { index, point in
            .chunkProgress(
                path: file.path,
                prefix: ChunkPrefix(
                    index: index, offset: chunks[index].offset, sha256: chunks[index].sha256.lowercased(),
                    bytes: point.bytes, prefixSHA256: point.prefixSHA256))
        }
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
                        var pace = ChunkProgressPace()
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
                                let (completions, completion) = AsyncStream.makeStream(of: ChunkReport.self)
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
                                    completed: { completion.yield(.completed(segment: $0, sha256: $1)) },
                                    progressInterval: ChunkPrefix.granularity,
                                    progressed: { completion.yield(.progressed(segment: $0, point: $1)) })
                                let request = FetchRequest(
                                    source: source, offset: splitter.resumeOffset, expectedLength: file.length,
                                    entityTag: nil, partURL: part, end: last.offset + last.length)
                                async let transfer = fetchSegments(
                                    request, into: splitter, blocks: rangeBlocks,
                                    requestLength: ChunkPlan.requestLength, completion: completion)
                                for await report in completions {
                                    guard case .completed(let segment, let digest) = report else {
                                        if case .progressed(let segment, let point) = report,
                                            pace.admits(at: .now)
                                        {
                                            await hooks.checkpoint([prefix(next[segment], point)], nil, nil)
                                        }
                                        continue
                                    }
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
                                    // Kept here for the next transfer, and journaled for the next launch.
                                    resumePoints.record(key(next[segment]), point)
                                    await hooks.checkpoint([prefix(next[segment], point)], nil, nil)
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
        outcome.changes.append(try await commitVerified(file, part: part, final: final, bytes: shared, hooks: hooks))
    }
}

/// What the splitter of a run of chunks reports, in order: a chunk whose last byte is written (its digest), or how
/// far a chunk still arriving is (``ChunkPrefix``).
private enum ChunkReport: Sendable {
    case completed(segment: Int, sha256: String)
    case progressed(segment: Int, point: ChunkResumePoints.Point)
}
