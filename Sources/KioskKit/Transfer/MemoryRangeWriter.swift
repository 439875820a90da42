import Foundation
import KioskCore

/// The bytes of one range of a file, received into memory instead of a part file: a subchunk gap of an update,
/// put together with the installed bytes before its chunk is hashed (``ChunkAssembly``). Writes land at the file's
/// offsets; one outside the range is refused.
final class MemoryRangeWriter: PositionalPartFileWriter {
    /// The range of the file this writer holds.
    let range: Range<Int64>
    private let state: Locked<(bytes: Data, filled: Int64)>

    /// A writer for `range`, empty.
    init(range: Range<Int64>) {
        self.range = range
        state = Locked((Data(count: Int(range.count)), 0))
    }

    /// The range's bytes, once every one of them was written; `nil` before.
    var bytes: Data? {
        state.withLock { $0.filled == range.count ? $0.bytes : nil }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(KioskError) {
        let end = state.withLock { range.lowerBound + $0.filled }
        try write(bytes, at: end)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(KioskError) {
        guard offset >= range.lowerBound, offset + Int64(bytes.count) <= range.upperBound else {
            throw .invalidResponse("bytes at \(offset) are outside the range \(range) asked for")
        }
        state.withLock { state in
            let start = Int(offset - range.lowerBound)
            state.bytes.replaceSubrange(start..<(start + bytes.count), with: bytes)
            state.filled += Int64(bytes.count)
        }
    }

    func close() {}
}
