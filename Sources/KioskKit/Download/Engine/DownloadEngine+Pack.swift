import Crypto
import Foundation
import KioskCore

extension DownloadEngine {
    /// Fetches a run of files with one ranged request of the pack (holding one connection permit). Each file is
    /// verified against its SHA-256, moved to its final name and journaled as soon as its last byte is written, as
    /// ``fetchAndVerify`` does for one file, so a run cut short keeps the files it completed. Never throws: one
    /// outcome per file, in order; a file whose bytes did not match is counted (``IntegrityCounts``) and ends with a
    /// need of a new grant, like a file fetched on its own; a file the request did not complete
    /// ends with the request's error (its bytes are dropped: it is fetched again on its own or in another run).
    func fetchPack(_ job: PackJob, tally: ProgressTally, hooks: EngineHooks) async -> [FileOutcome] {
        let key = "\u{0}pack:" + (job.files.first?.path ?? "")
        let parts = job.files.map { layout.partFile(productID: job.productID, path: $0.path) }
        let factory = fetcher.writerFactory
        let (completions, completion) = AsyncStream.makeStream(of: (index: Int, sha256: String).self)
        let splitter = SegmentSplitter(
            lengths: job.files.map(\.length), start: job.start,
            open: { index throws(KioskError) in try factory.open(parts[index], 0) },
            written: { tally.update(key, bytes: $0) },
            completed: { completion.yield(($0, $1)) })
        var outcomes = job.files.map { FileOutcome(file: $0) }
        var verifiedBytes: Int64 = 0
        async let transfer = fetchRun(job, into: splitter, parts: parts, completion: completion)
        for await (index, digest) in completions {
            let file = job.files[index]
            do {
                if let need = try await verify(file, digest: digest, part: parts[index], job: job, hooks: hooks) {
                    outcomes[index].stop = .needsNewGrant(need)
                } else {
                    outcomes[index].changes.append(.verified(path: file.path))
                    verifiedBytes += file.length
                }
            } catch {
                outcomes[index].stop = FileOutcome.Stop(error)
            }
        }
        let failure = await transfer
        for index in outcomes.indices where outcomes[index].changes.isEmpty && outcomes[index].stop == nil {
            // Not completed by the request: fetched again (its partial bytes are not kept).
            fileSystem.remove(parts[index])
            outcomes[index].stop = FileOutcome.Stop(
                failure ?? KioskError.invalidResponse("the pack's answer ended before \(job.files[index].path)"))
        }
        tally.settle(key, adding: verifiedBytes)
        return outcomes
    }

    /// The ranged request of a pack run into `splitter` (none for a run of empty files); returns its error, if any,
    /// once the splitter has reported every file it completed, and ends `completion` then.
    private func fetchRun(
        _ job: PackJob, into splitter: SegmentSplitter, parts: [URL],
        completion: AsyncStream<(index: Int, sha256: String)>.Continuation
    ) async -> (any Error)? {
        do {
            try Task.checkCancellation()
            try GrantValidation.requireTrusted(job.grant, receivedAt: job.grantReceivedAt)
        } catch {
            splitter.finish()
            completion.finish()
            return error
        }
        let request = FetchRequest(
            source: ContentSource(url: job.url, token: job.grant.token), offset: job.start,
            expectedLength: job.grant.totalLength, entityTag: nil, partURL: parts[0], end: job.start + job.length)
        return await fetchSegments(
            job.length > 0 ? request : nil, into: splitter, blocks: packBlocks, completion: completion)
    }

    /// A file of a pack run whose bytes are all in its part file: moved to its final name and journaled when its
    /// digest matches (`nil`); otherwise deleted and counted (``IntegrityCounts``), then a need of a new grant.
    private func verify(
        _ file: GrantFile, digest: String, part: URL, job: PackJob, hooks: EngineHooks
    ) async throws -> GrantNeed? {
        let final = layout.stagedFile(productID: job.productID, path: file.path)
        guard digest == file.sha256.lowercased() else {
            fileSystem.remove(part)
            try await integrityFailed(
                IntegrityFailure(path: file.path, chunk: nil, expectedSHA256: file.sha256, actualSHA256: digest),
                productID: job.productID, counts: job.integrity, hooks: hooks)
            return .contentMismatch(path: file.path)
        }
        // The journal fsyncs the file (by name: it is closed) and its folder before the record.
        _ = try await commitVerified(file, part: part, final: final, bytes: nil, hooks: hooks)
        return nil
    }
}
