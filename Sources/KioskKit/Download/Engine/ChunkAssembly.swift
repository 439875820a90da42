import Crypto
import Foundation
import KioskCore

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
