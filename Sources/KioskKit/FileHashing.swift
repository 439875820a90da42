import Crypto
import Foundation
import KioskCore

/// Streaming SHA-256 helpers; no file is ever read whole into memory.
enum FileHashing {
    static let chunkSize = 1 << 20

    /// Feeds the first `length` bytes of the file (all of it when `nil`) to `hasher`, 1 MiB at a time.
    /// Returns the number of bytes read.
    @discardableResult
    static func update(_ hasher: inout SHA256, withContentsOf url: URL, upTo length: Int64? = nil) throws -> Int64 {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var total: Int64 = 0
        while true {
            var want = chunkSize
            if let length { want = Int(min(Int64(chunkSize), length - total)) }
            if want <= 0 { break }
            guard let data = try handle.read(upToCount: want), !data.isEmpty else { break }
            hasher.update(data: data)
            total += Int64(data.count)
        }
        return total
    }

    /// The lowercase hex SHA-256 of a whole file, read in chunks.
    static func sha256(of url: URL) throws -> String {
        var hasher = SHA256()
        try update(&hasher, withContentsOf: url)
        return hasher.finalize().hexString
    }

}
