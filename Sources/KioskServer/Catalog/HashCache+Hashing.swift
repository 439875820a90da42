import Crypto
import Foundation
import KioskCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension HashCache {
    /// The size of each read: small enough that the bytes are still in the CPU's cache when the chunker and both
    /// hashes have passed over them.
    static let readSize = 256 << 10

    /// Reads a file once, in ``readSize`` reads into one buffer, and computes its SHA-256 and its content-defined
    /// chunks (``FileHashes/chunking``) with their SHA-256s.
    ///
    /// Each byte goes through the chunker's gear hash and two SHA-256s (the file's and its chunk's), except the
    /// first chunk's bytes, whose digest is a copy of the file's hash state finalized at the first boundary.
    static func hashFile(atPath path: String) throws -> FileHashes {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        defer { close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: readSize, alignment: 64)
        defer { buffer.deallocate() }
        // `.standard` is supported: the chunker always exists.
        var chunker = ContentDefinedChunker(FileHashes.chunking)!
        var file = SHA256()
        // The hash of the current chunk, unused during the first one.
        var chunk = SHA256()
        var chunks: [FileChunk] = []
        // The bytes of the current chunk read so far.
        var chunkLength = 0
        while true {
            let count = read(descriptor, buffer.baseAddress, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: path])
            }
            if count == 0 { break }
            var rest = UnsafeRawBufferPointer(rebasing: buffer[..<count])
            while !rest.isEmpty {
                let cut = chunker.nextBoundary(in: rest)
                let piece = UnsafeRawBufferPointer(rebasing: rest[..<(cut ?? rest.count)])
                file.update(bufferPointer: piece)
                if !chunks.isEmpty { chunk.update(bufferPointer: piece) }
                chunkLength += piece.count
                guard let cut else { break }
                chunks.append(
                    FileChunk(
                        length: UInt32(chunkLength),
                        digest: SHA256Digest(chunks.isEmpty ? file.finalize() : chunk.finalize())))
                chunk = SHA256()
                chunkLength = 0
                rest = UnsafeRawBufferPointer(rebasing: rest[cut...])
            }
        }
        if !chunks.isEmpty && chunkLength > 0 {
            chunks.append(FileChunk(length: UInt32(chunkLength), digest: SHA256Digest(chunk.finalize())))
        }
        // A file of one chunk keeps no list: its digest is the chunk's.
        if chunks.count == 1 { chunks = [] }
        return FileHashes(digest: SHA256Digest(file.finalize()), chunks: chunks)
    }
}
