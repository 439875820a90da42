import Foundation
import KioskCore
import KioskServer
import Testing

@testable import KioskKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension UpdateEndToEndTests {
    /// The bytes of a journaled download that are verified and were fetched, not reused: its verified files and
    /// chunks under `grant`, less what it reused.
    static func journaledFetchedBytes(_ record: DownloadRecord, grant: Grant) -> Int64 {
        var verified: Int64 = 0
        for file in grant.files {
            if record.verifiedPaths.contains(file.path) {
                verified += file.length
            } else if let chunks = file.chunks, let indexes = record.verifiedChunks[file.path] {
                verified += indexes.reduce(0) { $0 + chunks[$1].length }
            }
        }
        return verified - record.reusedBytes.values.reduce(0, +)
    }

    /// Checks, after a kill, that 1.0 is still the installed version with its exact files and that 2.0 is not in
    /// place; returns the journal's record of the update.
    func expectOldVersionIntact(root: URL, versions: Versions, after kill: String) throws -> DownloadRecord? {
        let layout = CacheLayout(root: root)
        let (snapshot, _) = Journal(layout: layout).load()
        let installed = snapshot.installed.first { $0.productID == Self.product }
        #expect(installed?.version == "1.0", "after the kill \(kill): installed \(String(describing: installed))")
        let folder = layout.content(productID: Self.product, version: "1.0")
        #expect(Self.files(in: folder) == Set(versions.old.keys), "after the kill \(kill)")
        for (path, data) in versions.old {
            #expect(
                try Data(contentsOf: folder.appendingPathComponent(path)) == data, "after the kill \(kill): \(path)")
        }
        #expect(!FileManager.default.fileExists(atPath: layout.content(productID: Self.product, version: "2.0").path))
        return snapshot.downloads.first { $0.productID == Self.product }
    }

    /// `kill -9` of `kiosk get` twice in the middle of an update, a real process against the real server: once while
    /// it copies chunks from 1.0 (nothing fetched yet), once three quarters through the fetches (the server paced so
    /// that the kill lands there). After each kill 1.0 is installed and intact; the third run installs exactly 2.0,
    /// reports the whole update's reuse, and the wire carried the new chunks plus only what the second kill cut
    /// short.
    @Test func killedTwiceDuringAnUpdateThenResumedInstallsExactlyTheNewVersion() async throws {
        // 512 KiB/s per response: the new bytes (2.6 MB, over 2 connections) take about 3 s.
        try await TestServer.with(configure: { $0.faults = .spec(try! FaultSpec(parsing: "throttle=512KiB/s")) }) {
            server in
            let versions = Versions()
            let (proof, root, old, new, hashes) = try await installOldThenPublishNew(
                server, versions, sparingFaults: true)
            guard case .receipt(let receipt) = proof else { return }
            let layout = CacheLayout(root: root)
            let expected = Self.updateCost(old: old, new: new, versions)
            let largestChunk = new.files.flatMap { $0.chunks ?? [] }.map(\.length).max() ?? 0
            let connections = 2
            let command = [
                "get", Self.product, "--receipt", "-", "--server", server.baseURL.absoluteString, "--cache", root.path,
                "--connections", "\(connections)",
            ]
            let input = Data(receipt.utf8)
            let sentBefore = try await Support.settledBytesSent(server)

            // 1. Killed while seeding: the big file's part is being filled from 1.0, nothing fetched yet.
            let part = layout.partFile(productID: Self.product, path: Self.big)
            let seeding = try await ChildProcess.runKiosk(
                command, input: input, killWhen: { Support.fileSize(part) > 0 && server.contentBytesSent == sentBefore }
            )
            try #require(seeding.signal == SIGKILL, "the first run was not killed: \(seeding)")
            #expect(try await Support.settledBytesSent(server) == sentBefore, "the first kill came after fetching")
            let afterSeeding = try expectOldVersionIntact(root: root, versions: versions, after: "while seeding")
            let bigChunks = new.files.first { $0.path == Self.big }?.chunks?.count ?? 0
            #expect((afterSeeding?.verifiedChunks[Self.big]?.count ?? 0) < bigChunks, "seeding was over at the kill")

            // 2. Killed three quarters through the fetches: with two connections, the first chunks are in (the ranges
            // of subchunks around the edits, and a new 1 MiB file, are new), the last ones in flight.
            let seedingSent = server.contentBytesSent
            let fetching = try await ChildProcess.runKiosk(
                command, input: input, killWhen: { server.contentBytesSent >= seedingSent + expected * 3 / 4 })
            try #require(fetching.signal == SIGKILL, "the second run was not killed: \(fetching)")
            let sentAtKill = try await Support.settledBytesSent(server) - sentBefore
            let record = try #require(
                try expectOldVersionIntact(root: root, versions: versions, after: "while fetching"))
            let reused = new.totalLength - expected
            #expect(record.reusedBytes.values.reduce(0, +) == reused, "the seeding finished before the fetches")
            let kept = Self.journaledFetchedBytes(record, grant: new)
            #expect(kept > 0 && kept < expected, "journaled \(kept) fetched bytes of \(expected)")
            // Cut short by the kill: bytes sent but not journaled (the responses in flight, and the chunks received
            // that the journal's next group commit would have recorded).
            let lost = sentAtKill - kept

            // 3. Resumed to the end.
            let resumed = try await ChildProcess.runKiosk(command, input: input)
            #expect(resumed.exitStatus == 0, "\(resumed)")
            let folder = layout.content(productID: Self.product, version: "2.0")
            #expect(resumed.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == folder.path)
            #expect(Self.files(in: folder) == Set(hashes.keys))
            for (path, hash) in hashes { #expect(try Support.sha256(of: folder.appendingPathComponent(path)) == hash) }
            #expect(
                !FileManager.default.fileExists(atPath: layout.content(productID: Self.product, version: "1.0").path))
            // The reuse of both killed runs survived: the last line reports the whole update.
            let size = { (bytes: Int64) in ByteCountFormatter.string(fromByteCount: bytes, countStyle: .file) }
            let line = "done (reused \(size(reused)), fetched \(size(expected)))"
            #expect(resumed.standardError.contains(line), "\(resumed.standardError)")

            // On the wire across the three runs: what the update costs, plus at most what the kill cut short, which is at
            // most a chunk per connection and a chunk per connection received but not yet journaled.
            let total = try await Support.settledBytesSent(server) - sentBefore
            print(
                "kill mid-update: update cost \(expected), sent at the kill \(sentAtKill), kept \(kept), total \(total)")
            #expect(total >= expected && total <= expected + lost, "sent \(total), new \(expected), lost \(lost)")
            #expect(lost <= Int64(2 * connections) * largestChunk, "the kill cost \(lost) bytes")
        }
    }
}
