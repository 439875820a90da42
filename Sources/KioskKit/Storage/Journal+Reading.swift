import Foundation
import KioskCore

/// Reading the journal back at launch (see ``Journal/load()``), and rebuilding installed content from the disk.
extension Journal {
    /// The log's first line: the generation of the snapshot its entries apply to.
    struct LogHeader: Codable, Hashable {
        var generation: UInt64
    }

    /// The snapshot at `url`, when it reads and is of a format this KioskKit knows.
    func read(_ url: URL) -> JournalSnapshot? {
        guard let data = fileSystem.contents(of: url), !data.isEmpty,
            let snapshot = try? KioskJSON.decode(JournalSnapshot.self, from: data),
            snapshot.format <= JournalSnapshot.currentFormat
        else { return nil }
        return snapshot
    }

    /// The snapshot with the log's entries applied, up to the first torn or undecodable line.
    func replayingLog(onto snapshot: JournalSnapshot) -> JournalSnapshot {
        guard let generation = snapshot.generation, let data = fileSystem.contents(of: logURL) else { return snapshot }
        var result = snapshot
        var lines = data.split(separator: 0x0A, omittingEmptySubsequences: false)
        if data.last != 0x0A { lines.removeLast() }  // torn: the last line never got its newline
        guard let first = lines.first,
            (try? KioskJSON.decode(LogHeader.self, from: Data(first)))?.generation == generation
        else { return snapshot }  // a stale log: the snapshot already holds it
        for line in lines.dropFirst() where !line.isEmpty {
            guard let entry = try? KioskJSON.decode(JournalEntry.self, from: Data(line)) else { break }
            result.apply(entry)
        }
        return result
    }

    /// Installed content found under `Content/<product_id>/<version>/` (hashes unknown).
    static func scanInstalledContent(_ layout: CacheLayout, fileSystem: any KioskFileSystem) -> [InstalledContent] {
        guard let products = fileSystem.contentsOfDirectory(layout.contentRoot) else { return [] }
        var found: [InstalledContent] = []
        for productID in products.sorted() where Identifiers.isValidProductID(productID) {
            let productFolder = layout.contentRoot.appendingPathComponent(productID, isDirectory: true)
            guard let versions = fileSystem.contentsOfDirectory(productFolder) else { continue }
            for version in versions.sorted() where Identifiers.isValidContentVersion(version) {
                let folder = layout.content(productID: productID, version: version)
                let files = fileSystem.regularFiles(under: folder)
                    .map { InstalledFile(path: $0.path, length: $0.status.size, sha256: "") }
                    .sorted { $0.path < $1.path }
                guard !files.isEmpty else { continue }
                let date =
                    fileSystem.status(folder).map { Date(timeIntervalSince1970: Double($0.modified) / 1e9) } ?? Date()
                found.append(
                    InstalledContent(
                        productID: productID, version: version, directory: folder,
                        files: files, installedAt: date))
            }
        }
        return found
    }
}
