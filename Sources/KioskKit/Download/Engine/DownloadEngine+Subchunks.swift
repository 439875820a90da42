import Crypto
import Foundation
import KioskCore

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
                headers: [BearerAuthorization.name: BearerAuthorization.value(grant.token)])
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
        let source = try ContentSource.of(file, in: grant, api: api)
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
                guard let bytes = try await fetchGap(gap, of: source, part: part, file: file) else {
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

    /// The bytes `range` of `file` at `source`, or nil when they do not come as asked (any failure but cancellation,
    /// which is thrown): exactly those bytes, of the grant's version of the file (`If-Range` with its tag), fetched
    /// as every other range is (``fetchRange(_:into:blocks:requestLength:)``).
    private func fetchGap(
        _ range: Range<Int64>, of source: ContentSource, part: URL, file: GrantFile
    ) async throws -> Data? {
        let memory = MemoryRangeWriter(range: range)
        let request = FetchRequest(
            source: source, offset: range.lowerBound, expectedLength: file.length,
            entityTag: EntityTag.content(sha256: file.sha256)?.headerValue, partURL: part, end: range.upperBound)
        do {
            try await fetchRange(request, into: memory, blocks: rangeBlocks, requestLength: ChunkPlan.requestLength)
            return memory.bytes
        } catch {
            try Task.checkCancellation()
            return nil
        }
    }
}
