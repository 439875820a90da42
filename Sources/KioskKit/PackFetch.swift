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

    /// The length of the run.
    var length: Int64 { files.reduce(0) { $0 + $1.length } }
}

/// Receives a pack range in order and writes each file's bytes into its own part file, hashing each file as it
/// goes; a file is closed as soon as its last byte is written. Empty files get an empty part file.
///
/// Writes come from one transfer at a time, in order (a broken connection goes on from the next byte): a write at
/// any other offset is refused.
final class PackSplitter: PositionalPartFileWriter {
    private struct State {
        /// The bytes of the run written so far.
        var written: Int64 = 0
        /// The file being written (index in ``files``).
        var current = 0
        var writer: (any PartFileWriter)?
        var hasher = SHA256()
        /// Each file's digest once its last byte is written.
        var digests: [String?]
    }

    private let files: [GrantFile]
    private let parts: [URL]
    private let start: Int64
    private let open: @Sendable (URL) throws(KioskError) -> any PartFileWriter
    private let written: @Sendable (Int64) -> Void
    private let completed: @Sendable (_ index: Int, _ sha256: String) -> Void
    private let state: Locked<State>
    /// Where each file starts in the run, then the run's length.
    private let runOffsets: [Int64]

    /// A splitter of the run `files` starting at pack offset `start`, each written to its `parts` entry through
    /// `open`; `written` is told the bytes of the run written so far, and `completed` each file (its index and
    /// digest) once its last byte is written and its part file closed, in order.
    init(
        files: [GrantFile], parts: [URL], start: Int64,
        open: @escaping @Sendable (URL) throws(KioskError) -> any PartFileWriter,
        written: @escaping @Sendable (Int64) -> Void,
        completed: @escaping @Sendable (_ index: Int, _ sha256: String) -> Void
    ) {
        self.files = files
        self.parts = parts
        self.start = start
        self.open = open
        self.written = written
        self.completed = completed
        self.runOffsets = PackPlan.offsets(of: files)
        self.state = Locked(State(digests: Array(repeating: nil, count: files.count)))
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(KioskError) {
        try write(bytes, at: start + state.withLock { $0.written })
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(KioskError) {
        let (total, done) = try state.withLock { state throws(KioskError) -> (Int64, Range<Int>) in
            let before = state.current
            guard offset == start + state.written else {
                throw KioskError.invalidResponse("the pack's bytes did not come in order")
            }
            var rest = bytes
            while true {
                try finishCompleted(&state)
                guard !rest.isEmpty else { break }
                guard state.current < files.count else {
                    throw KioskError.invalidResponse("the pack sent more bytes than its range")
                }
                let file = files[state.current]
                if state.writer == nil { state.writer = try open(parts[state.current]) }
                let fileWritten = state.written - offsetInRun(state.current)
                let count = Int(min(Int64(rest.count), file.length - fileWritten))
                let slice = UnsafeRawBufferPointer(rebasing: rest[..<count])
                try state.writer!.write(slice)
                state.hasher.update(bufferPointer: slice)
                state.written += Int64(count)
                rest = UnsafeRawBufferPointer(rebasing: rest[count...])
            }
            return (state.written, before..<state.current)
        }
        written(total)
        report(done)
    }

    /// Closes the file being written (the transfer ended), finishing the empty files at the end of the run when
    /// every byte came (reported to `completed`), and returns how many files of the run are complete.
    func finish() -> Int {
        let done = state.withLock { state in
            let before = state.current
            try? finishCompleted(&state)
            state.writer?.close()
            state.writer = nil
            return before..<state.current
        }
        report(done)
        return done.upperBound
    }

    /// Tells `completed` about the files of `range`, outside the lock.
    private func report(_ range: Range<Int>) {
        guard !range.isEmpty else { return }
        let digests = state.withLock { state in range.map { state.digests[$0]! } }
        for (index, digest) in zip(range, digests) { completed(index, digest) }
    }

    func synchronize() throws(KioskError) {}

    func close() {}

    /// Finishes the current file while it is complete (empty files at once): closes it and keeps its digest.
    private func finishCompleted(_ state: inout State) throws(KioskError) {
        while state.current < files.count, state.written - offsetInRun(state.current) == files[state.current].length {
            if state.writer == nil { state.writer = try open(parts[state.current]) }  // an empty file
            state.writer?.close()
            state.writer = nil
            state.digests[state.current] = state.hasher.finalize().hexString
            state.hasher = SHA256()
            state.current += 1
        }
    }

    /// Where file `index` starts in the run.
    private func offsetInRun(_ index: Int) -> Int64 { runOffsets[index] }
}

extension DownloadEngine {
    /// Fetches a run of files with one ranged request of the pack (holding one connection permit). Each file is
    /// verified against its SHA-256, moved to its final name and journaled as soon as its last byte is written, as
    /// ``fetchAndVerify`` does for one file, so a run cut short keeps the files it completed. Never throws: one
    /// outcome per file, in order; a file whose bytes did not match is reported to the owner and ends with
    /// ``EngineSignal/needsNewGrant(reason:)``, like a file fetched on its own; a file the request did not complete
    /// ends with the request's error (its bytes are dropped: it is fetched again on its own or in another run).
    func fetchPack(_ job: PackJob, tally: ProgressTally, hooks: EngineHooks) async -> [FileOutcome] {
        let key = "\u{0}pack:" + (job.files.first?.path ?? "")
        let parts = job.files.map { layout.partFile(productID: job.productID, path: $0.path) }
        let factory = fetcher.writerFactory
        let (completions, completion) = AsyncStream.makeStream(of: (index: Int, sha256: String).self)
        let splitter = PackSplitter(
            files: job.files, parts: parts, start: job.start,
            open: { url throws(KioskError) in try factory.open(url, 0) },
            written: { tally.update(key, bytes: $0) },
            completed: { completion.yield(($0, $1)) })
        var outcomes = job.files.map { FileOutcome(file: $0) }
        var verifiedBytes: Int64 = 0
        async let transfer: (any Error)? = fetchRun(job, into: splitter, parts: parts, completion: completion)
        for await (index, digest) in completions {
            let file = job.files[index]
            do {
                try await verify(file, digest: digest, part: parts[index], productID: job.productID, hooks: hooks)
                outcomes[index].changes.append(.verified(path: file.path))
                verifiedBytes += file.length
            } catch {
                outcomes[index].error = error
            }
        }
        let failure = await transfer
        for index in outcomes.indices where outcomes[index].changes.isEmpty && outcomes[index].error == nil {
            // Not completed by the request: fetched again (its partial bytes are not kept).
            fileSystem.remove(parts[index])
            outcomes[index].error =
                failure ?? KioskError.invalidResponse("the pack's answer ended before \(job.files[index].path)")
        }
        tally.settle(key, adding: verifiedBytes)
        return outcomes
    }

    /// The ranged request of a pack run into `splitter`; returns its error, if any, once the splitter has reported
    /// every file it completed, and ends `completion` then.
    private func fetchRun(
        _ job: PackJob, into splitter: PackSplitter, parts: [URL],
        completion: AsyncStream<(index: Int, sha256: String)>.Continuation
    ) async -> (any Error)? {
        var failure: (any Error)?
        do {
            try Task.checkCancellation()
            if GrantValidation.trustedUntil(job.grant, receivedAt: job.grantReceivedAt) <= Date() {
                throw KioskError.server(
                    status: 401, code: APIErrorCode.tokenExpired.rawValue, message: "The grant is about to expire.",
                    retryAfter: nil)
            }
            let length = job.length
            if length > 0 {
                let request = FetchRequest(
                    url: job.url, token: job.grant.token, offset: job.start, expectedLength: job.grant.totalLength,
                    entityTag: nil, partURL: parts[0], end: job.start + length)
                let fetcher = self.fetcher
                let packBlocks = self.packBlocks
                _ = try await budget.withPermit {
                    let blocks = packBlocks.take()
                    defer { packBlocks.give(blocks) }
                    return try await fetcher.fetchRange(request, into: splitter, blocks: blocks)
                }
            }
        } catch {
            failure = error
        }
        _ = splitter.finish()
        completion.finish()
        return failure
    }

    /// A file of a pack run whose bytes are all in its part file: moved to its final name and journaled when its
    /// digest matches; otherwise deleted and reported to the owner, then ``EngineSignal/needsNewGrant(reason:)``.
    private func verify(
        _ file: GrantFile, digest: String, part: URL, productID: String, hooks: EngineHooks
    ) async throws {
        let final = layout.stagedFile(productID: productID, path: file.path)
        guard digest == file.sha256.lowercased() else {
            fileSystem.remove(part)
            try await hooks.integrityFailed(
                IntegrityFailure(path: file.path, chunk: nil, expectedSHA256: file.sha256, actualSHA256: digest))
            throw EngineSignal.needsNewGrant(reason: .contentMismatch(path: file.path))
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
    }
}
