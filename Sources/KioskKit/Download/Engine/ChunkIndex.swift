import Crypto
import Foundation
import KioskCore

/// The chunks of installed files, cut the way the server cuts (the grant's ``ChunkingParameters``) and hashed:
/// SHA-256 → where the bytes are. The bytes are read once, 1 MiB at a time; a damaged chunk simply has another hash
/// (and is fetched).
enum ChunkIndex {
    /// Indexes `files` of the folder `directory`; `nil` when this client does not cut with `parameters`. A file that
    /// cannot be read is left out (its chunks are fetched).
    static func build(
        _ files: [InstalledFile], in directory: URL, parameters: ChunkingParameters, fileSystem: any KioskFileSystem
    ) throws -> [String: ChunkSource]? {
        try build(
            ranges: files.map { ChunkSource(path: $0.path, offset: 0, length: .max) }, in: directory,
            parameters: parameters, fileSystem: fileSystem)
    }

    /// Indexes the byte ranges `sources` of files of `directory`, each cut from its first byte as if it were a file
    /// of its own (a ``ChunkSource/length`` of `Int64.max` reads to the end of the file); `nil` when this client
    /// does not cut with `parameters`. A range that cannot be read is indexed as far as it was read.
    static func build(
        ranges sources: [ChunkSource], in directory: URL, parameters: ChunkingParameters,
        fileSystem: any KioskFileSystem
    ) throws -> [String: ChunkSource]? {
        guard ContentDefinedChunker(parameters) != nil else { return nil }
        var index: [String: ChunkSource] = [:]
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: FileHashing.chunkSize, alignment: 64)
        defer { buffer.deallocate() }
        var opened: (path: String, file: any KioskFile)?
        defer { opened?.file.close() }
        for source in sources {
            try Task.checkCancellation()
            if opened?.path != source.path {
                opened?.file.close()
                opened = nil
                let url = directory.appendingPathComponent(source.path, isDirectory: false)
                guard let file = try? fileSystem.open(url, mode: .read) else { continue }
                opened = (source.path, file)
            }
            guard let file = opened?.file else { continue }
            try? add(source, of: file, parameters: parameters, buffer: buffer, to: &index)
        }
        return index
    }

    /// Cuts and hashes one range of a file into `index` (the first place a hash is seen is kept).
    private static func add(
        _ source: ChunkSource, of file: any KioskFile, parameters: ChunkingParameters,
        buffer: UnsafeMutableRawBufferPointer, to index: inout [String: ChunkSource]
    ) throws(SystemCallError) {
        guard var chunker = ContentDefinedChunker(parameters) else { return }
        var hasher = SHA256()
        var start: Int64 = 0  // from the range's first byte
        var position: Int64 = 0
        func cut(at end: Int64) {
            let digest = hasher.finalize().hexString
            if index[digest] == nil {
                index[digest] = ChunkSource(path: source.path, offset: source.offset + start, length: end - start)
            }
            hasher = SHA256()
            start = end
        }
        while position < source.length {
            let want = Int(min(Int64(buffer.count), source.length - position))
            let count = try file.read(
                into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: source.offset + position)
            if count == 0 { break }
            var offset = 0
            while offset < count {
                let rest = UnsafeRawBufferPointer(rebasing: buffer[offset..<count])
                guard let boundary = chunker.nextBoundary(in: rest) else {
                    hasher.update(bufferPointer: rest)
                    break
                }
                hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: rest[..<(rest.startIndex + boundary)]))
                offset += boundary
                cut(at: position + Int64(offset))
            }
            position += Int64(count)
        }
        if position > start { cut(at: position) }
    }
}
