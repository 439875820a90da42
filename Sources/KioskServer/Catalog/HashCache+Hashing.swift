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
    /// chunks (``FileHashes/chunking``) with their SHA-256s (``ChunkDigester``).
    static func hashFile(atPath path: String) throws -> FileHashes {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        defer { close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: readSize, alignment: 64)
        defer { buffer.deallocate() }
        var digester = ChunkDigester(FileHashes.chunking)
        while true {
            let count = read(descriptor, buffer.baseAddress, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: path])
            }
            if count == 0 { break }
            digester.update(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
        let (digest, chunks) = digester.finish()
        // A file of one chunk keeps no list: its digest is the chunk's.
        return FileHashes(digest: digest, chunks: chunks.count == 1 ? [] : chunks)
    }
}
