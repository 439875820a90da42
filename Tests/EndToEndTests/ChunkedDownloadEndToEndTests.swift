import Foundation
import KioskCore
import KioskServer
import Synchronization
import Testing

@testable import KioskKit

/// #9: files the server cuts into chunks are fetched as parallel ranges, verified chunk by chunk, re-fetched chunk by
/// chunk, and resumed without hashing again what the journal says is verified.
@Suite("Chunked downloads end to end", .serialized, .timeLimit(.minutes(3)))
struct ChunkedDownloadEndToEndTests {
    typealias Support = KioskKitTestSupport

    static let product = "com.example.kiosk.test.chunked"
    static let path = "Contents/big.bin"

    /// Publishes one file of `mebibytes` MiB of random bytes; returns them and the grant's chunks (which the test
    /// requires: without them it would prove nothing about chunks).
    func publish(_ server: TestServer, mebibytes: Int = 24) async throws -> (
        data: Data, chunks: [GrantChunk], receipt: String
    ) {
        let data = Support.randomData(mebibytes << 20)
        try await Support.publish(Self.product, version: "1.0", files: [Self.path: data], on: server)
        let purchase = try await server.buy(Self.product)
        let grant = try await server.grant(Self.product, receipt: purchase.receiptData)
        let chunks = try #require(grant.files.first?.chunks)
        #expect(grant.chunking?.isSupported == true)
        #expect(chunks.count > 1, "a \(mebibytes) MiB file in \(chunks.count) chunks")
        return (data, chunks, purchase.receiptData)
    }

    func makeClient(
        _ url: URL, root: URL, writer: FileWriterFactory = .posix, fileSystem: (any KioskFileSystem)? = nil
    ) async throws -> KioskClient {
        try await KioskKitTestSupport.makeClient(url, root: root) {
            $0.fileWriterFactory = writer
            $0.maxConnectionsPerFile = 4
            if let fileSystem { $0.fileSystem = fileSystem }
        }
    }

    @Test func parallelRangesGiveTheExactBytes() async throws {
        try await TestServer.with { server in
            let (data, _, receipt) = try await publish(server)
            let writers = ObservedWriters(delay: 0.002)
            let client = try await makeClient(
                server.baseURL, root: server.makeScratchDirectory(), writer: writers.factory)
            try await client.enqueue(productID: Self.product, receipt: receipt)
            let content = try await client.waitUntilInstalled(productID: Self.product)
            #expect(try Data(contentsOf: content.url(for: Self.path)) == data)
            #expect(content.files.first?.sha256 == Support.sha256(data))
            // Every byte went through writes at offsets, several chunks at once, never more than four.
            #expect(writers.appended == 0)
            #expect(writers.most >= 2 && writers.most <= 4, "at most \(writers.most) chunk writes at once")
            #expect(server.contentBytesSent == Int64(data.count))
            await client.close()
        }
    }

    /// Progress counts verified bytes only: with one request per file in flight, chunks are verified in file order,
    /// so every byte count reported is a chunk boundary, never a count in the middle of a chunk. Writes past the
    /// middle of the file wait (5 s a block) until the test has seen a report in the middle, so that there is one to
    /// check however late a loaded machine delivers the events (reports may be coalesced).
    @Test func progressCountsOnlyVerifiedChunks() async throws {
        try await TestServer.with { server in
            let (data, chunks, receipt) = try await publish(server, mebibytes: 8)
            let pace = WritePace(0, slowing: (after: Int64(data.count / 2), to: 5))
            var configuration = KioskClient.Configuration()
            configuration.maxConnectionsPerFile = 1
            configuration.progressInterval = .zero
            configuration.fileWriterFactory = TestWriter.factory(pace: pace)
            let client = try await KioskClient(
                serverURL: server.baseURL, cacheRoot: server.makeScratchDirectory(), configuration: configuration)
            let events = client.events
            let seen = Mutex<[Int64]>([])
            let recorder = Task {
                for await event in events {
                    if case .progress(let snapshot) = event {
                        seen.withLock { $0.append(snapshot.progress.bytesWritten) }
                    }
                    if case .installed = event { break }
                }
            }
            try await client.enqueue(productID: Self.product, receipt: receipt)
            try await KioskKitTestSupport.eventually("a progress report in the middle of the file") {
                seen.withLock { $0.contains { $0 > 0 && $0 < Int64(data.count) } }
            }
            pace.set(0)
            _ = try await client.waitUntilInstalled(productID: Self.product)
            await recorder.value
            let reported = seen.withLock { $0 }
            let boundaries = Set(chunks.map(\.offset) + [Int64(data.count)])
            #expect(
                reported.allSatisfy(boundaries.contains),
                "\(reported.filter { !boundaries.contains($0) }) are not boundaries")
            await client.close()
        }
    }

    @Test func aCorruptedChunkIsFetchedAgainAlone() async throws {
        try await TestServer.with { server in
            let (data, chunks, receipt) = try await publish(server)
            let proxy = try LoopbackProxy(to: server.port, corruptPartialResponses: 5..<6)
            defer { proxy.stop() }
            let client = try await makeClient(proxy.baseURL, root: server.makeScratchDirectory())
            try await client.enqueue(productID: Self.product, receipt: receipt)
            let content = try await client.waitUntilInstalled(productID: Self.product)
            #expect(try Data(contentsOf: content.url(for: Self.path)) == data)

            // The chunk holding the flipped byte, and nothing else, came twice.
            let range = try #require(proxy.corruptedRange)
            guard case .satisfied(let corrupted, _)? = ContentRange(parsing: range) else {
                Issue.record("not a Content-Range: \(range)")
                return
            }
            // The proxy flips the middle byte of the answer's body; an answer may bring a run of chunks.
            let flipped = corrupted.first + corrupted.length / 2
            let chunk = try #require(chunks.first { $0.offset <= flipped && flipped < $0.offset + $0.length })
            let extra = proxy.bytesToClient - data.count
            #expect(extra >= Int(chunk.length), "\(extra) bytes over the file, the chunk is \(chunk.length)")
            // Headers (a few hundred bytes a response) and the grant: far less than any other chunk.
            #expect(
                extra < Int(chunk.length) + (128 << 10), "\(extra) bytes over the file, the chunk is \(chunk.length)")
            await client.close()
        }
    }

    @Test func aChunkCorruptedTwiceIsAnIntegrityErrorNamingTheFile() async throws {
        try await TestServer.with { server in
            // More than the largest chunk (4 MiB): random bytes of 4 MiB are now and then one chunk, with no list.
            let (_, _, receipt) = try await publish(server, mebibytes: 5)
            // Every partial response is corrupted: the first chunk fails twice.
            let proxy = try LoopbackProxy(to: server.port, corruptPartialResponses: 1..<Int.max)
            defer { proxy.stop() }
            let client = try await makeClient(proxy.baseURL, root: server.makeScratchDirectory())
            try await client.enqueue(productID: Self.product, receipt: receipt)
            do {
                _ = try await client.waitUntilInstalled(productID: Self.product)
                Issue.record("installed corrupted content")
            } catch let error as KioskKit.KioskError {
                guard case .integrity(let productID, let path, _, _) = error else {
                    Issue.record("expected an integrity error, got \(error)")
                    return
                }
                #expect(productID == Self.product && path == Self.path)
            }
            await client.close()
        }
    }

    @Test func aStopInTheMiddleOfParallelChunksResumesWithoutHashingVerifiedChunksAgain() async throws {
        try await TestServer.with { server in
            let (data, chunks, receipt) = try await publish(server)
            let root = server.makeScratchDirectory()
            // Slow past half of the bytes: the download is still on its way when the test looks, however late.
            let pace = WritePace(0.03, slowing: (after: Int64(data.count / 2), to: 0.5))
            let first = try await makeClient(server.baseURL, root: root, writer: TestWriter.factory(pace: pace))
            try await first.enqueue(productID: Self.product, receipt: receipt)
            try await Support.eventually("a third of the bytes verified") {
                (await first.download(for: Self.product)?.progress.bytesWritten ?? 0) > Int64(data.count / 3)
            }
            await first.close()  // as if the app were stopped: the journal still says "active"

            // What the journal says is verified, and what the server sent so far.
            let (snapshot, _) = Journal(layout: CacheLayout(root: root)).load()
            let verified = try #require(snapshot.downloads.first?.verifiedChunks[Self.path])
            let verifiedBytes = verified.reduce(Int64(0)) { $0 + chunks[$1].length }
            #expect(verifiedBytes > Int64(data.count / 3) && verified.count < chunks.count)
            try await expectResumeFetchesOnlyTheRest(server, root: root, data: data, verifiedBytes: verifiedBytes)
        }
    }

    /// Resumes the download in `root` with a new client: only what the journal does not hold is fetched (chunks
    /// not verified, from where the journal says each chunk in flight had arrived), and no verified chunk is read
    /// back to be hashed (what the client reads is its journal, and the prefixes of the chunks in flight, whose
    /// digests it checks).
    func expectResumeFetchesOnlyTheRest(
        _ server: TestServer, root: URL, data: Data, verifiedBytes: Int64
    ) async throws {
        let (snapshot, _) = Journal(layout: CacheLayout(root: root)).load()
        let prefixBytes = (snapshot.downloads.first?.chunkPrefixes[Self.path] ?? []).reduce(Int64(0)) { $0 + $1.bytes }
        let sentBefore = try await Support.settledBytesSent(server)
        let fileSystem = CountingFileSystem()
        let client = try await makeClient(server.baseURL, root: root, fileSystem: fileSystem)
        let content = try await client.waitUntilInstalled(productID: Self.product)
        #expect(try Data(contentsOf: content.url(for: Self.path)) == data)
        #expect(server.contentBytesSent - sentBefore == Int64(data.count) - verifiedBytes - prefixBytes)
        #expect(
            fileSystem.bytesRead < prefixBytes + 256 << 10,
            "read back \(fileSystem.bytesRead) bytes; \(verifiedBytes) were verified, \(prefixBytes) in prefixes")
        await client.close()
    }

    /// `kill -9` of `kiosk get` while 4 runs of the file's chunks are in flight: every chunk the journal calls
    /// verified is in the part file with its bytes; the resume fetches only the chunks not verified, each whole, and
    /// reads nothing back to hash it (what it reads is its journal).
    @Test func aKillInTheMiddleOfParallelChunksResumesWithoutHashingVerifiedChunksAgain() async throws {
        // Every response at 8 MiB/s, so that the kill lands with runs of the file in flight.
        let throttle = try FaultSpec(parsing: "throttle=8MiB/s")
        try await TestServer.with(configure: { $0.faults = .spec(throttle) }) { server in
            let (data, chunks, receipt) = try await publish(server, mebibytes: 48)
            let cache = server.makeScratchDirectory()
            let command = [
                "get", Self.product, "--receipt", "-", "--server", server.baseURL.absoluteString, "--cache", cache.path,
                "--connections-per-file", "4",
            ]
            let bytesBefore = server.contentBytesSent
            let outcome = try await ChildProcess.runKiosk(
                command, input: Data(receipt.utf8),
                killWhen: { server.contentBytesSent >= bytesBefore + Int64(data.count / 2) })
            try #require(outcome.signal == SIGKILL, "\(outcome)")
            let sentAtKill = try await Support.settledBytesSent(server) - bytesBefore

            let layout = CacheLayout(root: cache)
            let (snapshot, _) = Journal(layout: layout).load()
            let verified = try #require(snapshot.downloads.first?.verifiedChunks[Self.path])
            let part = try Data(contentsOf: layout.partFile(productID: Self.product, path: Self.path))
            for index in verified {
                let range = Int(chunks[index].offset)..<Int(chunks[index].offset + chunks[index].length)
                #expect(part.count >= range.upperBound && part[range] == data[range], "chunk \(index)")
            }
            let verifiedBytes = verified.reduce(Int64(0)) { $0 + chunks[$1].length }
            #expect(verifiedBytes > 0 && verified.count < chunks.count)
            print(
                "kill with \(sentAtKill) bytes sent: \(verified.count) of \(chunks.count) chunks verified,",
                "\(sentAtKill - verifiedBytes) bytes in flight lost")
            // Lost at most: the chunk each of the 4 runs was in, and what the sockets' buffers and the journal's
            // last commits held: 12 MiB, a quarter of the file (4 MiB, what 50 ms at 32 MiB/s and the buffers hold on
            // a quiet machine, was passed by 0.6 MiB on a loaded CI machine, whose commits come later). A journal
            // that lost verified chunks would lose more: every chunk verified since the last commit that counted.
            let largest = chunks.map(\.length).max() ?? 0
            #expect(sentAtKill - verifiedBytes <= 4 * largest + Int64(12 << 20))
            try await expectResumeFetchesOnlyTheRest(
                server, root: cache, data: data, verifiedBytes: verifiedBytes)
        }
    }
}

extension ChunkedDownloadEndToEndTests {
    /// Verified chunks are trusted without being read again, but not when their part file is gone: a part deleted
    /// between two runs (the OS purging caches) makes its chunks fetched again, never installed as a hole.
    @Test func aPartFileDeletedBetweenRunsIsFetchedAgain() async throws {
        try await TestServer.with { server in
            let (data, _, receipt) = try await publish(server, mebibytes: 8)
            let root = server.makeScratchDirectory()
            // Slow once 2 MiB are written: the download is still on its way when the test looks, however late.
            let pace = WritePace(0.03, slowing: (after: 2 << 20, to: 0.5))
            let first = try await makeClient(server.baseURL, root: root, writer: TestWriter.factory(pace: pace))
            try await first.enqueue(productID: Self.product, receipt: receipt)
            try await Support.eventually("a chunk verified") {
                (await first.download(for: Self.product)?.progress.bytesWritten ?? 0) > 0
            }
            await first.close()
            #expect((Support.keptBytes(root: root, productID: Self.product)[Self.path] ?? 0) > 0, "chunks journaled")
            try FileManager.default.removeItem(
                at: CacheLayout(root: root).partFile(productID: Self.product, path: Self.path))

            let second = try await makeClient(server.baseURL, root: root)
            let content = try await second.waitUntilInstalled(productID: Self.product)
            #expect(try Data(contentsOf: content.url(for: Self.path)) == data)
            await second.close()
        }
    }
}

extension KioskKitTestSupport {
    /// The bytes of each file of a download that its journal under `root` keeps for good: a file verified whole, the
    /// chunks verified of a file fetched by chunks and how far its chunks in flight arrived, or the part of a file
    /// fetched whole (resumed from its last byte).
    static func keptBytes(root: URL, productID: String) -> [String: Int64] {
        let layout = CacheLayout(root: root)
        let journal = Journal(layout: layout)
        guard let snapshot = journal.read(journal.url).map({ journal.replayingLog(onto: $0) }),
            let record = snapshot.downloads.first(where: { $0.productID == productID }), let grant = record.grant
        else { return [:] }
        var kept: [String: Int64] = [:]
        for file in grant.files {
            if record.verifiedPaths.contains(file.path) {
                kept[file.path] = file.length
            } else if GrantValidation.chunks(of: file, in: grant) != nil {
                // Verified chunks, and the prefixes of the chunks in flight.
                kept[file.path] =
                    record.verifiedChunkLength(of: file)
                    + (record.chunkPrefixes[file.path] ?? []).reduce(Int64(0)) { $0 + $1.bytes }
            } else {
                kept[file.path] = fileSize(layout.partFile(productID: productID, path: file.path))
            }
        }
        return kept
    }

    /// How many chunks in flight the journal under `root` records a non-empty prefix of (how far they had arrived),
    /// over every file of the download of `productID`.
    static func journaledChunkPrefixes(root: URL, productID: String) -> Int {
        let journal = Journal(layout: CacheLayout(root: root))
        guard let snapshot = journal.read(journal.url).map({ journal.replayingLog(onto: $0) }),
            let record = snapshot.downloads.first(where: { $0.productID == productID })
        else { return 0 }
        return record.chunkPrefixes.values.reduce(0) { $0 + $1.filter { $0.bytes > 0 }.count }
    }
}
