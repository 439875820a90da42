import Crypto
import Foundation
import KioskCore

/// What an update takes from the installed version, decided from the grant, the installed files and the index of
/// their chunks alone (no I/O): which granted files are copied whole, and which chunks are copied.
enum SeedPlan {
    /// For each granted file to seed (see `wanted`), the path of an installed file with the same SHA-256 and length,
    /// under any path (a renamed file costs nothing), by granted path. Installed files whose hash is unknown (a
    /// journal rebuilt from the disk) match nothing. O(granted + installed files).
    static func wholeFiles(
        _ files: [GrantFile], installed: [InstalledFile], wanted: (GrantFile) -> Bool
    ) -> [String: String] {
        var byHash: [String: InstalledFile] = [:]
        for file in installed where !file.sha256.isEmpty { byHash[file.sha256.lowercased()] = file }
        guard !byHash.isEmpty else { return [:] }
        var plan: [String: String] = [:]
        for file in files where wanted(file) {
            if let source = byHash[file.sha256.lowercased()], source.length == file.length {
                plan[file.path] = source.path
            }
        }
        return plan
    }

    /// The chunks among `pending` (indexes into `chunks`) whose SHA-256 and length the index of the installed chunks
    /// holds, with where to copy them from, in file order.
    static func reusableChunks(
        _ chunks: [GrantChunk], pending: [Int], index: [String: ChunkSource]
    ) -> [(index: Int, source: ChunkSource)] {
        pending.compactMap { position in
            let chunk = chunks[position]
            guard let source = index[chunk.sha256.lowercased()], source.length == chunk.length else { return nil }
            return (position, source)
        }
    }
}
