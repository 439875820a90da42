// The README's URLDownload snippet ("From the command line"), word for word.
import KioskKit

/// README, "From the command line": a file that is not a product, resumable and verified.
func downloadLevel(url: URL, caches: URL) async throws {
    let download = try URLDownload(url: url, to: caches.appendingPathComponent("level-7.pak"))
    let outcome = try await download.run { progress in print(progress.bytesOnDisk, progress.totalLength ?? -1) }
    print(outcome.sha256, outcome.verification)  // .representationDigest: it matched the server's Repr-Digest
}
