import Crypto
import Foundation
import KioskCore

/// Which files of a grant come from its pack (``GrantPack``): runs of consecutive small files, each run fetched
/// with one ranged request of the pack instead of one request per file. Per-request work (a URLSession task, its
/// callbacks and timers, the server's admission) dominated the time of products made of thousands of small files.
enum PackPlan {
    /// Files up to this length are fetched from the pack; longer ones have a request (or chunks) of their own.
    static let maximumFileLength: Int64 = 256 << 10
    /// The most bytes one pack request brings: several requests of a product run at once, each holding a
    /// connection of the budget.
    static let maximumRunLength: Int64 = 512 << 10
    /// The most files one pack request brings.
    static let maximumRunFiles = 256
    /// The blocks a run's bytes are written in (``DownloadEngine/packBlocks``).
    static let blockSize = 64 << 10

    /// The path of the grant's pack, when it is one this client uses: exactly
    /// `/v1/packs/<product>/<version>` of the grant, as long as the grant's files. Any other pack is ignored (the
    /// files are fetched one by one), never an error.
    static func path(of grant: Grant) -> String? {
        guard let pack = grant.pack, pack.length == grant.totalLength, grant.files.count > 1,
            pack.url == "/v1/packs/\(grant.productID)/\(grant.contentVersion)"
        else { return nil }
        return pack.url
    }

    /// Where each file starts in the pack, then the pack's length.
    static func offsets(of files: [GrantFile]) -> [Int64] { GrantPack.offsets(of: files.lazy.map(\.length)) }

    /// The run of files starting at `index`: consecutive files that `isPackable` accepts, within
    /// ``maximumRunLength`` and ``maximumRunFiles``; `nil` when fewer than two files qualify (one file is fetched
    /// on its own).
    static func run(from index: Int, in files: [GrantFile], isPackable: (GrantFile) -> Bool) -> Range<Int>? {
        var end = index
        var bytes: Int64 = 0
        while end < files.count, end - index < maximumRunFiles, isPackable(files[end]),
            end == index || bytes + files[end].length <= maximumRunLength
        {
            bytes += files[end].length
            end += 1
        }
        return end - index >= 2 ? index..<end : nil
    }
}

/// A run of a grant's files fetched with one ranged request of its pack.
struct PackJob: Sendable {
    /// The files, consecutive in the grant.
    var files: [GrantFile]
    /// Where the first starts in the pack.
    var start: Int64
    var url: URL
    var grant: Grant
    var grantReceivedAt: Date?
    var productID: String
    /// The transfer's hash failures, shared by its files.
    var integrity: Locked<IntegrityCounts>

    /// The length of the run.
    var length: Int64 { files.reduce(0) { $0 + $1.length } }
}

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
            url: job.url, token: job.grant.token, offset: job.start, expectedLength: job.grant.totalLength,
            entityTag: nil, partURL: parts[0], end: job.start + job.length)
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
        do {
            try fileSystem.rename(part, to: final)
        } catch {
            throw KioskError.fileSystem(path: file.path, underlying: "could not move the verified file")
        }
        // The journal fsyncs the file (by name: it is closed) and its folder before the record.
        await hooks.checkpoint(
            [.verified(path: file.path)], final.deletingLastPathComponent(), UnsyncedFile(final, fileSystem: fileSystem)
        )
        return nil
    }
}
