import Crypto
import Foundation
import KioskCore

extension DownloadEngine {
    /// Seeds the staging of an update from the installed version (`installed`, of another version than the grant's,
    /// or of the grant's version with files lost to a purge) before anything is fetched:
    /// 1. a granted file whose SHA-256 and length are an installed file's (under any path) is copied (a clone where
    ///    the volume has one) into its part, hashed from the copy, then takes its final name and is journaled as
    ///    verified and reused; a copy that does not hash right is deleted and the file fetched;
    /// 2. for the granted files still missing that the grant cuts into chunks, the installed files (but those copied
    ///    whole) are cut locally with the grant's chunking and hashed once; each pending chunk found there is copied
    ///    into the part at its offset, hashed from the bytes written, and journaled as verified and reused. The
    ///    other chunks are fetched as usual (``ChunkPlan/runs``);
    /// 3. the chunks still missing next to reused ones are put together from the installed subchunks and ranges
    ///    fetched for the rest (``seedSubchunks(_:files:index:from:grant:onDisk:folders:tally:hooks:)``).
    ///
    /// A kill resumes from the journal: what was reused is not copied again. The installed version is only read. A
    /// full disk throws ``KioskError/insufficientStorage(needed:available:)``, as the fetches do. The reads and
    /// hashes run in the download's task, as the other hashing of the engine does.
    func seed(
        _ work: inout DownloadWork, from installed: InstalledContent, grant: Grant, onDisk: inout [String: Int64],
        folders: inout Set<String>, tally: ProgressTally, hooks: EngineHooks
    ) async throws {
        // Files already under their final name in staging are checked by the fetch path; verified ones are done.
        func wanted(_ file: GrantFile) -> Bool { !work.verifiedPaths.contains(file.path) && onDisk[file.path] == nil }
        // A part holding journaled chunks is never replaced by a copy (a copy that failed its hash would leave them
        // claimed and gone): such a file goes on chunk by chunk.
        let whole = SeedPlan.wholeFiles(grant.files, installed: installed.files) { file in
            wanted(file) && work.verifiedChunks[file.path] == nil
        }
        for file in grant.files {
            guard let source = whole[file.path] else { continue }
            try Task.checkCancellation()
            try await copyWhole(
                file, from: installed.fileURL(source), work: &work, onDisk: &onDisk, folders: &folders,
                tally: tally, hooks: hooks)
        }

        guard let parameters = grant.chunking, parameters.isSupported else { return }
        let chunked = grant.files.filter { file in
            wanted(file) && GrantValidation.chunks(of: file, in: grant) != nil
        }
        guard !chunked.isEmpty else { return }
        let copied = Set(whole.values)
        let candidates = installed.files.filter { !copied.contains($0.path) }
        guard
            let index = try ChunkIndex.build(
                candidates, in: installed.directory, parameters: parameters, fileSystem: fileSystem),
            !index.isEmpty
        else { return }
        for file in chunked {
            guard let chunks = GrantValidation.chunks(of: file, in: grant) else { continue }
            let pending = ChunkPlan.pending(chunkCount: chunks.count, verified: work.verifiedChunks[file.path] ?? [])
            let reusable = SeedPlan.reusableChunks(chunks, pending: pending, index: index)
            guard !reusable.isEmpty else { continue }
            try await copyChunks(
                reusable, of: file, chunks: chunks, from: installed, work: &work, onDisk: &onDisk, folders: &folders,
                tally: tally, hooks: hooks)
        }
        try await seedSubchunks(
            &work, files: chunked, index: index, from: installed, grant: grant, onDisk: &onDisk, folders: &folders,
            tally: tally, hooks: hooks)
    }

    /// Copies an installed file with the granted file's hash into its part, checks the copy and gives it its final
    /// name (see ``seed(_:from:grant:onDisk:folders:tally:hooks:)``).
    private func copyWhole(
        _ file: GrantFile, from source: URL, work: inout DownloadWork, onDisk: inout [String: Int64],
        folders: inout Set<String>, tally: ProgressTally, hooks: EngineHooks
    ) async throws {
        let part = layout.partFile(productID: work.productID, path: file.path)
        let final = layout.stagedFile(productID: work.productID, path: file.path)
        let folder = part.deletingLastPathComponent()
        try createDirectory(folder, known: &folders)
        onDisk[file.path + ".part"] = nil
        do {
            try fileSystem.copyFile(source, to: part)
        } catch {
            fileSystem.remove(part)
            if error.code == ENOSPC || error.code == EDQUOT {
                throw KioskError.insufficientStorage(
                    needed: work.grant.map { $0.totalLength - work.verifiedBytes } ?? file.length,
                    available: availableSpace(layout.root))
            }
            return  // the installed file is unreadable: it is fetched
        }
        guard (try? FileHashing.sha256(of: part, fileSystem: fileSystem)) == file.sha256.lowercased() else {
            fileSystem.remove(part)  // damaged on disk: fetched instead
            return
        }
        do {
            try fileSystem.rename(part, to: final)
        } catch {
            fileSystem.remove(part)
            throw KioskError.fileSystem(path: file.path, underlying: "could not move the copied file")
        }
        let change = DownloadChange.verified(path: file.path, reused: file.length)
        work.record(change, file: file)
        tally.settle(file.path, adding: file.length)
        await hooks.checkpoint([change], folder, UnsyncedFile(final, fileSystem: fileSystem))
    }

    /// Opens the part file `part` of `file` for writes at offsets, creating its folder; nil when the app's writer
    /// only appends (the file is then fetched whole, in order).
    func openForChunks(
        _ part: URL, of file: GrantFile, onDisk: [String: Int64], folders: inout Set<String>
    ) throws -> (any PositionalPartFileWriter)? {
        try createDirectory(part.deletingLastPathComponent(), known: &folders)
        let opened = try fetcher.writerFactory.open(part, min(onDisk[file.path + ".part"] ?? 0, file.length))
        guard let writer = opened as? any PositionalPartFileWriter else {
            opened.close()
            return nil
        }
        return writer
    }

    /// Copies the chunks of a granted file found in the installed files into its part at their offsets, each hashed
    /// from the bytes written and journaled once they are durable
    /// (see ``seed(_:from:grant:onDisk:folders:tally:hooks:)``).
    private func copyChunks(
        _ reusable: [(index: Int, source: ChunkSource)], of file: GrantFile, chunks: [GrantChunk],
        from installed: InstalledContent, work: inout DownloadWork, onDisk: inout [String: Int64],
        folders: inout Set<String>, tally: ProgressTally, hooks: EngineHooks
    ) async throws {
        let part = layout.partFile(productID: work.productID, path: file.path)
        guard let writer = try openForChunks(part, of: file, onDisk: onDisk, folders: &folders) else { return }
        let shared = UnsyncedFile(shared: writer)
        var sources: [String: any KioskFile] = [:]
        defer { for source in sources.values { source.close() } }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: FileHashing.chunkSize, alignment: 64)
        defer { buffer.deallocate() }
        var copied: Int64 = 0  // in this run (the chunks verified before are counted already)
        defer {
            onDisk[file.path + ".part"] = fileSystem.fileSize(part)
            tally.settle(file.path, adding: copied)
        }
        for (index, source) in reusable {
            try Task.checkCancellation()
            let chunk = chunks[index]
            if sources[source.path] == nil {
                sources[source.path] = try? fileSystem.open(installed.fileURL(source.path), mode: .read)
            }
            guard let input = sources[source.path] else { continue }
            var hasher = SHA256()
            var done: Int64 = 0
            while done < chunk.length {
                let want = Int(min(Int64(buffer.count), chunk.length - done))
                guard
                    let count = try? input.read(
                        into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: source.offset + done),
                    count > 0
                else { break }
                let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
                try writer.write(bytes, at: chunk.offset + done)
                hasher.update(bufferPointer: bytes)
                done += Int64(count)
            }
            // The bytes written, not the index, decide: a file changed since it was indexed is fetched instead.
            guard done == chunk.length, hasher.finalize().hexString == chunk.sha256.lowercased() else { continue }
            let change = DownloadChange.chunkVerified(path: file.path, index: index, reused: chunk.length)
            work.record(change, file: file)
            copied += chunk.length
            tally.update(file.path, bytes: copied)
            // The journal fsyncs the part before the record.
            await hooks.checkpoint([change], nil, shared)
        }
    }
}
