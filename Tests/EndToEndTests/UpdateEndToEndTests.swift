import Foundation
import KioskCore
import KioskServer
import Testing

@testable import KioskKit

/// #10: a new version of an installed product costs only its new bytes. Files with an unchanged SHA-256 are copied,
/// the chunks of changed files found in the installed files are copied, the rest is fetched; the installed version
/// stays usable until the new one is installed.
@Suite("Updates end to end", .serialized, .timeLimit(.minutes(4)))
struct UpdateEndToEndTests {
    typealias Support = KioskKitTestSupport

    static let product = "com.example.kiosk.test.update"
    static let big = "Contents/big.bin"
    static let same = "Contents/same.bin"
    static let removed = "Contents/removed.bin"
    static let new = "Contents/new.bin"

    /// The issue's scenario at a quarter of its size: 1.0 has a 32 MiB file, a 4 MiB file and a 1 MiB file; 2.0
    /// inserts 1 MiB in the middle of the big one and overwrites 64 KiB near its end, keeps the 4 MiB file, drops the
    /// 1 MiB one and adds a new 1 MiB file.
    struct Versions {
        var old: [String: Data]
        var new: [String: Data]

        init() {
            // Seeded, so that the chunk boundaries, and the bytes an update costs, are the same in every run.
            let noise = UpdateEndToEndTests.noise
            let big = noise(32 << 20, 1)
            var edited = big
            edited.insert(contentsOf: noise(1 << 20, 2), at: 16 << 20)
            let overwritten = edited.count - (2 << 20)
            edited.replaceSubrange(overwritten..<(overwritten + (64 << 10)), with: noise(64 << 10, 3))
            let same = noise(4 << 20, 4)
            old = [
                UpdateEndToEndTests.big: big, UpdateEndToEndTests.same: same,
                UpdateEndToEndTests.removed: noise(1 << 20, 5),
            ]
            new = [
                UpdateEndToEndTests.big: edited, UpdateEndToEndTests.same: same,
                UpdateEndToEndTests.new: noise(1 << 20, 6),
            ]
        }
    }

    /// Random bytes without repeats, from `seed` (``KioskKitTestSupport/randomData(_:)`` repeats one random MiB, which content-defined
    /// chunking would find shared between unrelated files).
    static func noise(_ count: Int, _ seed: UInt64) -> Data {
        var generator = SplitMix64(seed: seed)
        var words = [UInt64](repeating: 0, count: (count + 7) / 8)
        for index in words.indices { words[index] = generator.next() }
        return words.withUnsafeBytes { Data($0.prefix(count)) }
    }

    /// The bytes of 2.0 that 1.0 has nowhere: the inserted MiB, the overwritten 64 KiB and the new file.
    static let trulyNew: Int64 = 1 << 20 + 64 << 10 + 1 << 20
    /// What an update may fetch beyond ``trulyNew``: the subchunks (at most 256 KiB each) that hold both ends of the
    /// insertion and of the overwrite.
    static let subchunkSlack: Int64 = 4 * 256 << 10

    /// What 2.0 costs by its manifests' chunks (what an update fetches without subchunks): the bytes of its chunks (or of its files without chunks) that 1.0 has
    /// nowhere, neither as a whole file nor as a chunk.
    static func newBytes(old: Grant, new: Grant) -> Int64 {
        let oldFiles = Set(old.files.map(\.sha256))
        let oldChunks = Set(old.files.flatMap { $0.chunks ?? [] }.map(\.sha256))
        var total: Int64 = 0
        for file in new.files where !oldFiles.contains(file.sha256) {
            guard let chunks = file.chunks else {
                total += file.length
                continue
            }
            total += chunks.filter { !oldChunks.contains($0.sha256) }.reduce(0) { $0 + $1.length }
        }
        return total
    }

    /// What updating 1.0 to 2.0 fetches, worked out from the manifests and the bytes as KioskKit decides it: files
    /// and chunks 1.0 has are copied; a missing chunk within ``SubchunkPlan/reach`` chunks of a reused one is cut
    /// into subchunks, and those found among the subchunks of 1.0's chunks that 2.0 does not reuse are copied too
    /// (when at least one is); everything else is fetched.
    static func updateCost(old: Grant, new: Grant, _ versions: Versions) -> Int64 {
        let subchunking = ChunkingParameters.subchunks
        func ranges(_ file: GrantFile) -> [GrantChunk] {
            file.chunks ?? [GrantChunk(offset: 0, length: file.length, sha256: file.sha256)]
        }
        func cut(_ data: Data, _ chunk: GrantChunk) -> [(length: Int, sha256: String)] {
            let bytes = data[Int(chunk.offset)..<Int(chunk.offset + chunk.length)]
            let lengths = Data(bytes).withUnsafeBytes {
                ContentDefinedChunker.chunkLengths(of: $0, parameters: subchunking) ?? []
            }
            var start = bytes.startIndex
            return lengths.map { length in
                defer { start += length }
                return (length, Support.sha256(Data(bytes[start..<(start + length)])))
            }
        }
        let used = Set(new.files.flatMap { [$0.sha256] + ranges($0).map(\.sha256) })
        var local = Set<String>()
        for file in old.files where !used.contains(file.sha256) {
            for chunk in ranges(file) where !used.contains(chunk.sha256) {
                for subchunk in cut(versions.old[file.path]!, chunk) { local.insert("\(subchunk.length) \(subchunk.sha256)") }
            }
        }
        let oldFiles = Set(old.files.map(\.sha256))
        let oldChunks = Set(old.files.flatMap(ranges).map(\.sha256))
        var total: Int64 = 0
        for file in new.files where !oldFiles.contains(file.sha256) {
            guard let chunks = file.chunks else {
                total += file.length
                continue
            }
            let pending = chunks.indices.filter { !oldChunks.contains(chunks[$0].sha256) }
            let candidates = Set(SubchunkPlan.candidates(pending: pending, verified: Set(chunks.indices).subtracting(pending)))
            for index in pending {
                let subchunks = candidates.contains(index) ? cut(versions.new[file.path]!, chunks[index]) : []
                let missing = subchunks.filter { !local.contains("\($0.length) \($0.sha256)") }
                total += missing.count == subchunks.count ? chunks[index].length : Int64(missing.reduce(0) { $0 + $1.length })
            }
        }
        return total
    }

    /// Publishes and installs 1.0 in a cache, then publishes 2.0. Returns the receipt, the cache root, both grants
    /// and the hashes of 2.0. With `sparingFaults`, 1.0 is installed with `Kiosk-Fault: none` (full speed on a server
    /// started with faults).
    func installOldThenPublishNew(_ server: TestServer, _ versions: Versions, sparingFaults: Bool = false) async throws
        -> (proof: PurchaseProof, root: URL, old: Grant, new: Grant, hashes: [String: String])
    {
        try await Support.publish(Self.product, version: "1.0", files: versions.old, on: server)
        let purchase = try await server.buy(Self.product)
        let root = server.makeScratchDirectory()
        let client = try await makeClient(server.baseURL, root: root, sparingFaults: sparingFaults)
        let proof = PurchaseProof.receipt(purchase.receiptData)
        _ = try await client.ensureInstalled(productID: Self.product, proof: proof)
        await client.close()
        let old = try await server.grant(Self.product, receipt: purchase.receiptData)
        let hashes = try await Support.publish(Self.product, version: "2.0", files: versions.new, on: server)
        let new = try await server.grant(Self.product, receipt: purchase.receiptData)
        #expect(new.contentVersion == "2.0" && new.chunking?.isSupported == true)
        #expect((new.files.first { $0.path == Self.big }?.chunks?.count ?? 0) > 8)
        return (proof, root, old, new, hashes)
    }

    func makeClient(
        _ url: URL, root: URL, writer: FileWriterFactory = .posix, availableSpace: (@Sendable (URL) -> Int64?)? = nil,
        sparingFaults: Bool = false
    ) async throws -> KioskClient {
        try await KioskKitTestSupport.makeClient(url, root: root) {
            if sparingFaults {
                let session = URLSessionConfiguration.ephemeral
                session.httpAdditionalHeaders = ["Kiosk-Fault": "none"]
                $0.sessionConfiguration = session
            }
            $0.fileWriterFactory = writer
            if let availableSpace { $0.availableSpace = availableSpace }
        }
    }

    /// The files of a version folder, by path.
    static func files(in folder: URL) -> Set<String> {
        Set(POSIXFileSystem().regularFiles(under: folder).map(\.path))
    }

    @Test func anUpdateFetchesOnlyTheChangedChunks() async throws {
        try await TestServer.with { server in
            let versions = Versions()
            let (proof, root, old, new, hashes) = try await installOldThenPublishNew(server, versions)
            let layout = CacheLayout(root: root)
            let sentBefore = try await Support.settledBytesSent(server)

            let client = try await makeClient(server.baseURL, root: root)
            let content = try await client.update(productID: Self.product, proof: proof)

            // The exact files of 2.0, nothing of 1.0 left.
            #expect(content.version == "2.0")
            try Support.expectInstalled(content, hashes: hashes)
            #expect(Self.files(in: content.directory) == Set(hashes.keys))
            #expect(
                !FileManager.default.fileExists(atPath: layout.content(productID: Self.product, version: "1.0").path))
            #expect(await client.installedContent(for: Self.product)?.version == "2.0")
            #expect(await client.keptVersions(of: Self.product).isEmpty)  // not asked to keep 1.0

            // On the wire: the new bytes and the subchunks around the edits, far less than the chunks they fall in.
            let sent = server.contentBytesSent - sentBefore
            let expected = Self.updateCost(old: old, new: new, versions)
            #expect(sent == expected, "sent \(sent), the update costs \(expected)")
            #expect(
                sent >= Self.trulyNew && sent <= Self.trulyNew + Self.subchunkSlack,
                "sent \(sent), the new bytes are \(Self.trulyNew)")
            let wholeChunks = Self.newBytes(old: old, new: new)
            #expect(sent < wholeChunks, "sent \(sent), the chunks with new bytes are \(wholeChunks)")
            let progress = try #require(await client.download(for: Self.product)?.progress)
            #expect(progress.bytesFetched == sent && progress.bytesReused == new.totalLength - sent)
            #expect(progress.fraction == 1)
            await client.close()
        }
    }

    @Test func aRenamedFileIsCopiedNotFetched() async throws {
        try await TestServer.with { server in
            let data = Self.noise(3 << 20, 7)
            let small = Self.noise(1000, 8)
            try await Support.publish(
                Self.product, version: "1.0", files: ["Contents/a.bin": data, "Contents/s.txt": small], on: server)
            let purchase = try await server.buy(Self.product)
            let root = server.makeScratchDirectory()
            let first = try await makeClient(server.baseURL, root: root)
            try await first.enqueue(productID: Self.product, receipt: purchase.receiptData)
            _ = try await first.waitUntilInstalled(productID: Self.product)
            await first.close()

            let hashes = try await Support.publish(
                Self.product, version: "2.0",
                files: ["Contents/Levels/renamed.bin": data, "Contents/Levels/s2.txt": small], on: server)
            let sentBefore = try await Support.settledBytesSent(server)
            let client = try await makeClient(server.baseURL, root: root)
            try await client.enqueue(productID: Self.product, receipt: purchase.receiptData)  // enqueue updates too
            let content = try await client.waitUntilInstalled(productID: Self.product)
            try Support.expectInstalled(content, hashes: hashes)
            #expect(server.contentBytesSent - sentBefore == 0, "fetched \(server.contentBytesSent - sentBefore)")
            let progress = try #require(await client.download(for: Self.product)?.progress)
            #expect(progress.bytesReused == Int64(data.count + small.count) && progress.bytesFetched == 0)
            await client.close()
        }
    }

    @Test func aStopInTheMiddleOfAnUpdateResumesWithoutCopyingReusedChunksAgain() async throws {
        try await TestServer.with { server in
            let versions = Versions()
            let (proof, root, old, new, hashes) = try await installOldThenPublishNew(server, versions)
            let bigChunks = try #require(new.files.first { $0.path == Self.big }?.chunks)

            // Slow writes at offsets: the copying of chunks is caught in the middle.
            let first = try await makeClient(server.baseURL, root: root, writer: TestWriter.factory(delay: 0.02))
            try await first.enqueue(productID: Self.product, proof: proof)
            try await Support.eventually("some chunks reused") {
                (await first.download(for: Self.product)?.progress.bytesReused ?? 0) > 4 << 20 + 4 << 20
            }
            await first.close()  // as if the app were stopped in the middle

            let (snapshot, _) = Journal(layout: CacheLayout(root: root)).load()
            let record = try #require(snapshot.downloads.first { $0.productID == Self.product })
            let reusedBefore = try #require(record.reusedBytes[Self.big])
            let verifiedBefore = record.verifiedChunks[Self.big] ?? []
            #expect(reusedBefore > 0 && verifiedBefore.count < bigChunks.count, "stopped after the update was done")
            // The old version is untouched meanwhile.
            let oldFolder = CacheLayout(root: root).content(productID: Self.product, version: "1.0")
            #expect(try Data(contentsOf: oldFolder.appendingPathComponent(Self.big)) == versions.old[Self.big])

            let writes = ObservedWriters()
            let second = try await makeClient(server.baseURL, root: root, writer: writes.factory)
            #expect(await second.download(for: Self.product)?.progress.bytesReused ?? 0 >= reusedBefore)
            let content = try await second.waitUntilInstalled(productID: Self.product)
            try Support.expectInstalled(content, hashes: hashes)
            // No chunk the journal had verified was written again, by a copy or a fetch.
            let rewritten = verifiedBefore.filter { writes.offsets.contains(bigChunks[$0].offset) }
            #expect(rewritten.isEmpty, "chunks \(rewritten.sorted()) written again")
            // The counts survived the relaunch: the whole update's reuse is reported.
            let progress = try #require(await second.download(for: Self.product)?.progress)
            #expect(progress.bytesReused + progress.bytesFetched == new.totalLength)
            #expect(progress.bytesReused > new.totalLength - Self.newBytes(old: old, new: new))
            await second.close()
        }
    }

    @Test func aDamagedLocalChunkIsFetched() async throws {
        try await TestServer.with { server in
            let versions = Versions()
            let (proof, root, old, new, hashes) = try await installOldThenPublishNew(server, versions)
            // One byte of the installed big file flipped at 1 MiB (before the insertion: same offset in 2.0).
            let installed = CacheLayout(root: root).content(productID: Self.product, version: "1.0")
                .appendingPathComponent(Self.big)
            let handle = try FileHandle(forUpdating: installed)
            try handle.seek(toOffset: 1 << 20)
            let byte = try #require(try handle.read(upToCount: 1)).first ?? 0
            try handle.seek(toOffset: 1 << 20)
            try handle.write(contentsOf: Data([byte ^ 0xFF]))
            try handle.close()
            let damaged = try #require(
                new.files.first { $0.path == Self.big }?.chunks?.first {
                    $0.offset <= 1 << 20 && 1 << 20 < $0.offset + $0.length
                })

            let sentBefore = try await Support.settledBytesSent(server)
            let client = try await makeClient(server.baseURL, root: root)
            let content = try await client.update(productID: Self.product, proof: proof)
            try Support.expectInstalled(content, hashes: hashes)
            let sent = server.contentBytesSent - sentBefore
            let extra = sent - Self.updateCost(old: old, new: new, versions)
            // The damaged subchunk (and at most the neighbours whose local cut it moved) came over the wire, not the
            // chunk.
            #expect(extra >= 1 && extra <= 3 * 256 << 10 && extra < damaged.length, "\(extra) bytes more")
            #expect(sent < Self.newBytes(old: old, new: new))
            await client.close()
        }
    }

    @Test func aFullDiskDuringAnUpdatePausesItAndKeepsTheOldVersion() async throws {
        try await TestServer.with { server in
            let versions = Versions()
            let (proof, root, _, _, hashes) = try await installOldThenPublishNew(server, versions)
            // The free space is unknown (no check up front): the disk fills up while chunks are copied.
            let disk = SimulatedDisk(capacity: 2 << 20)
            let sentBefore = try await Support.settledBytesSent(server)
            let client = try await makeClient(
                server.baseURL, root: root, writer: TestWriter.factory(disk: disk), availableSpace: { _ in nil })
            do {
                _ = try await client.update(productID: Self.product, proof: proof)
                Issue.record("installed on a full disk")
            } catch {
                guard case KioskKit.KioskError.insufficientStorage = error else {
                    Issue.record("expected insufficientStorage, got \(error)")
                    return
                }
            }
            #expect(disk.failures > 0)
            // It filled up while copying from 1.0, before anything was fetched.
            #expect(server.contentBytesSent == sentBefore)
            #expect((await client.download(for: Self.product)?.progress.bytesReused ?? 0) > 0)
            #expect(await client.download(for: Self.product)?.state == .paused(.insufficientStorage))
            // 1.0 is still installed and readable, byte for byte.
            let old = try #require(await client.installedContent(for: Self.product))
            #expect(old.version == "1.0")
            for (path, data) in versions.old { #expect(try Data(contentsOf: old.url(for: path)) == data, "\(path)") }

            disk.free()
            let content = try await client.update(productID: Self.product, proof: proof)
            try Support.expectInstalled(content, hashes: hashes)
            await client.close()
        }
    }
}

extension UpdateEndToEndTests {
    /// `kiosk get` of an installed product brings it to the served version and says what it reused and fetched.
    @Test func kioskGetUpdatesAndPrintsWhatItReusedAndFetched() async throws {
        try await TestServer.with { server in
            let versions = Versions()
            let (proof, root, old, new, hashes) = try await installOldThenPublishNew(server, versions)
            guard case .receipt(let receipt) = proof else { return }
            let sentBefore = try await Support.settledBytesSent(server)
            let command = [
                "get", Self.product, "--receipt", "-", "--server", server.baseURL.absoluteString, "--cache", root.path,
            ]
            let outcome = try await ChildProcess.runKiosk(command, input: Data(receipt.utf8))
            #expect(outcome.exitStatus == 0, "\(outcome)")
            let folder = CacheLayout(root: root).content(productID: Self.product, version: "2.0")
            #expect(outcome.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == folder.path)
            for (path, hash) in hashes { #expect(try Support.sha256(of: folder.appendingPathComponent(path)) == hash) }
            let fetched = Self.updateCost(old: old, new: new, versions)
            #expect(server.contentBytesSent - sentBefore == fetched)
            let size = { (bytes: Int64) in ByteCountFormatter.string(fromByteCount: bytes, countStyle: .file) }
            let expected = "reused \(size(new.totalLength - fetched)), fetched \(size(fetched))"
            #expect(outcome.standardError.contains("done (\(expected))"), "\(outcome.standardError)")
        }
    }
}
