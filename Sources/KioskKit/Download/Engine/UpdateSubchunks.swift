import Crypto
import Foundation
import KioskCore

/// Which chunks of an update are cut finer, and what the server's answer may hold (no I/O).
///
/// An edit inside a file changes the chunk it falls in (about 1 MiB), and an insertion the one or two after it, while
/// most of their bytes are still in the installed version. The server cuts such a chunk into subchunks of about
/// 64 KiB on request (``GrantSubchunks``); those the installed version holds are copied, and only the others are
/// fetched.
enum SubchunkPlan {
    /// How far from a verified chunk a missing one is still cut finer. Edits sit between chunks that are reused;
    /// an edit changes the chunk it falls in, and an insertion also the next few, until the boundaries line up
    /// again (normalized chunking can take several chunks to). Four chunks on each side of an edit hold those bytes
    /// in practice (in a simulation of #10's scenario over 40 contents, 4 fetched at most 4.05 % of 2.0, 2 at most
    /// 5.78 %, no limit 3.90 %), and bound what the server reads for a long run of new chunks. A file that reuses
    /// nothing (a new file) asks for nothing.
    static let reach = 4
    /// The most chunks asked for in one request (the server's limit).
    static let batchSize = 64

    /// The chunks among `pending` that lie within ``reach`` chunks of a verified one, in file order.
    static func candidates(pending: [Int], verified: Set<Int>) -> [Int] {
        guard !verified.isEmpty else { return [] }
        return pending.filter { index in
            (index - reach...index + reach).contains { verified.contains($0) }
        }
    }

    /// The subchunks of each chunk in `asked`, in that order, after checking the answer: the same chunks in the same
    /// order, cut with `chunking`, and for each, subchunks that cover the chunk exactly
    /// (``GrantValidation/validateCover(_:of:chunking:describe:)``). Anything else is
    /// ``KioskError/invalidResponse(_:)``.
    static func subchunks(
        of list: SubchunkList, asked: [Int], chunks: [GrantChunk], chunking: ChunkingParameters
    ) throws(KioskError) -> [[GrantChunk]] {
        guard list.chunking == chunking else {
            throw .invalidResponse("the subchunks were cut with other parameters than the grant announced")
        }
        guard list.chunks.map(\.index) == asked else {
            throw .invalidResponse("the subchunk answer is not for the chunks asked for")
        }
        return try list.chunks.map { (entry: ChunkSubchunks) throws(KioskError) -> [GrantChunk] in
            let chunk = chunks[entry.index]
            try GrantValidation.validateCover(
                entry.subchunks, of: chunk.offset..<(chunk.offset + chunk.length), chunking: chunking
            ) { reason in "the subchunks of chunk \(entry.index) are invalid: \(reason)" }
            return entry.subchunks
        }
    }

    /// The byte ranges (in the file) of the subchunks not in `local`, adjacent ones merged: what one chunk still
    /// needs from the server.
    static func gaps(_ subchunks: [GrantChunk], local: Set<Int>) -> [Range<Int64>] {
        var gaps: [Range<Int64>] = []
        for (position, subchunk) in subchunks.enumerated() where !local.contains(position) {
            let range = subchunk.offset..<(subchunk.offset + subchunk.length)
            if let last = gaps.last, last.upperBound == range.lowerBound {
                gaps[gaps.count - 1] = last.lowerBound..<range.upperBound
            } else {
                gaps.append(range)
            }
        }
        return gaps
    }
}

/// One chunk being put together in memory from installed subchunks and fetched ranges, then checked whole.
///
/// The buffer is sized by the chunks actually put together (``prepare(length:)``), never by what a grant announces:
/// the largest chunk of a validated grant is at most ``GrantLimits/chunkingBounds``' `largestMaximum`, 4 MiB for
/// the standard chunking.
struct ChunkAssembly: ~Copyable {
    /// The chunk's bytes so far.
    private(set) var buffer: UnsafeMutableRawBufferPointer

    /// An empty assembly: nothing is allocated until the first chunk.
    init() {
        buffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    }

    deinit { buffer.deallocate() }

    /// Makes room for a chunk of `length` bytes (a buffer only grows, to the largest chunk put together).
    mutating func prepare(length: Int) {
        guard length > buffer.count else { return }
        buffer.deallocate()
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: length, alignment: 64)
    }

    /// Reads the subchunk at `source` (of the open installed `file`) into its place, `at` bytes into the chunk;
    /// whether its bytes hash to `sha256` (a damaged or changed file does not).
    func copy(_ source: ChunkSource, of file: any KioskFile, at position: Int, sha256: String) -> Bool {
        let length = Int(source.length)
        var done = 0
        while done < length {
            let target = UnsafeMutableRawBufferPointer(rebasing: buffer[(position + done)..<(position + length)])
            guard let count = try? file.read(into: target, at: source.offset + Int64(done)), count > 0 else {
                return false
            }
            done += count
        }
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[position..<(position + length)])
        return Self.sha256(bytes) == sha256.lowercased()
    }

    /// Places fetched `bytes` `at` bytes into the chunk.
    func place(_ bytes: Data, at position: Int) {
        bytes.withUnsafeBytes { bytes in
            UnsafeMutableRawBufferPointer(rebasing: buffer[position..<(position + bytes.count)]).copyMemory(from: bytes)
        }
    }

    /// The first `length` bytes, when they hash to `sha256`.
    func verified(length: Int, sha256: String) -> UnsafeRawBufferPointer? {
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
        return Self.sha256(bytes) == sha256.lowercased() ? bytes : nil
    }

    private static func sha256(_ bytes: UnsafeRawBufferPointer) -> String {
        var hasher = SHA256()
        hasher.update(bufferPointer: bytes)
        return hasher.finalize().hexString
    }
}

extension DownloadEngine {
    /// The last step of seeding an update (see ``seed(_:from:grant:onDisk:folders:tally:hooks:)``): the chunks
    /// still missing next to reused ones are cut finer by the server (``GrantSubchunks``); each one whose subchunks
    /// the installed version partly holds is put together from those and from ranges fetched for the rest, checked
    /// against the chunk's SHA-256, written into the part and journaled as verified, with the installed bytes
    /// counted as reused. Anything that does not work out (no answer, an answer that does not check, a range that
    /// does not come, a chunk that does not hash right) leaves the chunk to the usual fetch.
    ///
    /// `index` holds the installed chunks; those the new version does not reuse are the ones cut finer here.
    func seedSubchunks(
        _ work: inout DownloadWork, files: [GrantFile], index: [String: ChunkSource], from installed: InstalledContent,
        grant: Grant, onDisk: inout [String: Int64], folders: inout Set<String>, tally: ProgressTally,
        hooks: EngineHooks
    ) async throws {
        guard let subchunking = grant.subchunks?.chunking, subchunking.isSupported else { return }
        var plans: [(file: GrantFile, chunks: [GrantChunk], candidates: [Int])] = []
        for file in files {
            guard let chunks = GrantValidation.chunks(of: file, in: grant) else { continue }
            let verified = work.verifiedChunks[file.path] ?? []
            let pending = ChunkPlan.pending(chunkCount: chunks.count, verified: verified)
            let candidates = SubchunkPlan.candidates(pending: pending, verified: verified)
            if !candidates.isEmpty { plans.append((file, chunks, candidates)) }
        }
        guard !plans.isEmpty else { return }
        // The installed chunks the new version has nowhere: where the unchanged parts of changed chunks are.
        var used = Set(grant.files.map { $0.sha256.lowercased() })
        for file in grant.files { for chunk in file.chunks ?? [] { used.insert(chunk.sha256.lowercased()) } }
        let orphans = index.filter { !used.contains($0.key) }.values
            .sorted { ($0.path, $0.offset) < ($1.path, $1.offset) }
        guard !orphans.isEmpty,
            let local = try ChunkIndex.build(
                ranges: orphans, in: installed.directory, parameters: subchunking, fileSystem: fileSystem),
            !local.isEmpty
        else { return }
        var assembly = ChunkAssembly()
        for plan in plans {
            var start = 0
            while start < plan.candidates.count {
                let batch = Array(plan.candidates[start..<min(start + SubchunkPlan.batchSize, plan.candidates.count)])
                start += batch.count
                guard
                    let lists = try await subchunks(
                        of: plan.file, batch: batch, chunks: plan.chunks, grant: grant, chunking: subchunking)
                else { break }
                try await assemble(
                    zip(batch, lists).map { ($0, $1) }, of: plan.file, chunks: plan.chunks, local: local,
                    installed: installed, assembly: &assembly, grant: grant, work: &work, onDisk: &onDisk,
                    folders: &folders, tally: tally, hooks: hooks)
            }
        }
    }

    /// Asks for the subchunks of `batch`, chunks of `file`; nil when the server does not answer them usably (the
    /// chunks are then fetched whole). Cancellation is thrown.
    private func subchunks(
        of file: GrantFile, batch: [Int], chunks: [GrantChunk], grant: Grant, chunking: ChunkingParameters
    ) async throws -> [[GrantChunk]]? {
        do {
            let path = try GrantValidation.subchunkPath(of: file, in: grant)
            let (list, _) = try await api.json(
                SubchunkList.self, method: "GET", path: path,
                query: [URLQueryItem(name: "chunks", value: batch.map(String.init).joined(separator: ","))],
                headers: ["Authorization": "Bearer \(grant.token)"])
            guard let list else { return nil }
            return try SubchunkPlan.subchunks(of: list, asked: batch, chunks: chunks, chunking: chunking)
        } catch {
            try Task.checkCancellation()
            return nil
        }
    }

    /// Puts together each chunk of `file` in `lists` whose subchunks the installed version partly holds (see
    /// ``seedSubchunks(_:files:index:from:grant:onDisk:folders:tally:hooks:)``).
    private func assemble(
        _ lists: [(index: Int, subchunks: [GrantChunk])], of file: GrantFile, chunks: [GrantChunk],
        local: [String: ChunkSource], installed: InstalledContent, assembly: inout ChunkAssembly, grant: Grant,
        work: inout DownloadWork, onDisk: inout [String: Int64], folders: inout Set<String>, tally: ProgressTally,
        hooks: EngineHooks
    ) async throws {
        let found = lists.filter { list in
            list.subchunks.contains { local[$0.sha256.lowercased()]?.length == $0.length }
        }
        guard !found.isEmpty else { return }
        let part = layout.partFile(productID: work.productID, path: file.path)
        guard let writer = try openForChunks(part, of: file, onDisk: onDisk, folders: &folders) else { return }
        let shared = UnsyncedFile(shared: writer)
        var sources: [String: any KioskFile] = [:]
        defer { for source in sources.values { source.close() } }
        var written: Int64 = 0  // in this run (the chunks verified before are counted already)
        defer {
            onDisk[file.path + ".part"] = fileSystem.fileSize(part)
            tally.settle(file.path, adding: written)
        }
        let url = try api.contentURL(for: file, in: grant)
        for (index, subchunks) in found {
            try Task.checkCancellation()
            let chunk = chunks[index]
            assembly.prepare(length: Int(chunk.length))
            // The installed subchunks, each checked as it is read.
            var copied = Set<Int>()
            var reused: Int64 = 0
            for (position, subchunk) in subchunks.enumerated() {
                guard let source = local[subchunk.sha256.lowercased()], source.length == subchunk.length else {
                    continue
                }
                if sources[source.path] == nil {
                    sources[source.path] = try? fileSystem.open(installed.fileURL(source.path), mode: .read)
                }
                guard let input = sources[source.path],
                    assembly.copy(
                        source, of: input, at: Int(subchunk.offset - chunk.offset), sha256: subchunk.sha256)
                else { continue }
                copied.insert(position)
                reused += subchunk.length
            }
            guard reused > 0 else { continue }
            // The rest from the server, a request per run of missing subchunks.
            var complete = true
            for gap in SubchunkPlan.gaps(subchunks, local: copied) {
                guard let bytes = try await fetchRange(gap, of: url, file: file, grant: grant) else {
                    complete = false
                    break
                }
                assembly.place(bytes, at: Int(gap.lowerBound - chunk.offset))
            }
            guard complete, let bytes = assembly.verified(length: Int(chunk.length), sha256: chunk.sha256) else {
                continue
            }
            try writer.write(bytes, at: chunk.offset)
            let change = DownloadChange.chunkVerified(path: file.path, index: index, reused: reused)
            work.record(change, file: file)
            written += chunk.length
            tally.update(file.path, bytes: written)
            await hooks.checkpoint([change], nil, shared)
        }
    }

    /// The bytes `range` of `file` at `url`, or nil when they do not come as asked (any failure but cancellation,
    /// which is thrown): exactly those bytes, of the grant's version of the file (`If-Range` with its tag).
    private func fetchRange(_ range: Range<Int64>, of url: URL, file: GrantFile, grant: Grant) async throws -> Data? {
        var request = URLRequest(url: url)
        request.setValue("Bearer \(grant.token)", forHTTPHeaderField: "Authorization")
        request.setValue("bytes=\(range.lowerBound)-\(range.upperBound - 1)", forHTTPHeaderField: "Range")
        request.setValue("\"\(file.sha256.lowercased())\"", forHTTPHeaderField: "If-Range")
        do {
            let response = try await api.send(request)
            let expected = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(file.length)"
            guard response.status == 206, response.header("Content-Range") == expected,
                response.body.count == range.count
            else { return nil }
            return response.body
        } catch {
            try Task.checkCancellation()
            return nil
        }
    }
}
