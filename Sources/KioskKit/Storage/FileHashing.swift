import Crypto
import Foundation
import KioskCore

/// Streaming SHA-256 helpers; no file is ever read whole into memory.
enum FileHashing {
    static let chunkSize = 1 << 20

    /// Feeds the first `length` bytes of the file (all of it when `nil`) to `hasher`, 1 MiB at a time.
    /// Returns the number of bytes read.
    @discardableResult
    static func update(
        _ hasher: inout SHA256, withContentsOf url: URL, upTo length: Int64? = nil,
        fileSystem: any KioskFileSystem
    ) throws(SystemCallError) -> Int64 {
        let file = try fileSystem.open(url, mode: .read)
        defer { file.close() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 64)
        defer { buffer.deallocate() }
        var total: Int64 = 0
        while true {
            var want = chunkSize
            if let length { want = Int(min(Int64(chunkSize), length - total)) }
            if want <= 0 { break }
            let count = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]))
            if count == 0 { break }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            total += Int64(count)
        }
        return total
    }

    /// Feeds the bytes `range` of a file to `hasher`, read 1 MiB at a time at their offsets. Returns the number of
    /// bytes read (fewer than the range's when the file ends first).
    @discardableResult
    static func update(
        _ hasher: inout SHA256, withContentsOf url: URL, range: Range<Int64>, fileSystem: any KioskFileSystem
    ) throws(SystemCallError) -> Int64 {
        let file = try fileSystem.open(url, mode: .read)
        defer { file.close() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 64)
        defer { buffer.deallocate() }
        var offset = range.lowerBound
        while offset < range.upperBound {
            let want = Int(min(Int64(chunkSize), range.upperBound - offset))
            let count = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: offset)
            if count == 0 { break }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            offset += Int64(count)
        }
        return offset - range.lowerBound
    }

    /// The lowercase hex SHA-256 of the bytes `range` of a file, read 1 MiB at a time at their offsets.
    static func sha256(of url: URL, range: Range<Int64>, fileSystem: any KioskFileSystem) throws(SystemCallError)
        -> String
    {
        var hasher = SHA256()
        try update(&hasher, withContentsOf: url, range: range, fileSystem: fileSystem)
        return hasher.finalize().hexString
    }

    /// The lowercase hex SHA-256 of a whole file, read in chunks.
    static func sha256(of url: URL, fileSystem: any KioskFileSystem) throws(SystemCallError) -> String {
        var hasher = SHA256()
        try update(&hasher, withContentsOf: url, fileSystem: fileSystem)
        return hasher.finalize().hexString
    }
}
