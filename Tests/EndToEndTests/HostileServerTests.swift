import Crypto
import Foundation
import KioskCore
import Testing

@testable import KioskKit

#if canImport(AsyncHTTPClient) && os(Linux)
    import NIOCore
    import NIOPosix
#endif

/// KioskKit and `kiosk` against a hostile server: grants with bad URLs, answers that never end or inflate without
/// bound, text with terminal escape sequences, links planted in the cache. Where the flaw could trap or exhaust the
/// process, the built `kiosk` tool runs in a child process and its exit, signal and peak memory are checked.
@Suite("KioskKit against a hostile server", .serialized, .timeLimit(.minutes(5)))
struct HostileServerTests {
    typealias Support = KioskKitTestSupport

    static let product = "com.example.kiosk.hostile"
    static let receipt = Data("cmVjZWlwdA==".utf8)
    static let hash = String(repeating: "ab", count: 32)

    /// A grant for ``product`` version 1.0 with one file at `url`.
    static func grant(url: String, length: Int = 3) -> String {
        """
        {"product_id":"\(product)","content_version":"1.0","total_length":\(length),
         "expires_at":"2099-01-01T00:00:00Z","token":"hostile-token",
         "files":[{"path":"Contents/a.bin","length":\(length),"sha256":"\(hash)","url":"\(url)"}]}
        """
    }

    /// `kiosk get <product> --receipt - --server <server> --cache <cache>`.
    static func kioskGet(_ server: URL, cache: URL, memoryCap: Int = 1 << 30) async throws -> ChildProcess.Outcome {
        try await ChildProcess.runKiosk(
            ["get", product, "--receipt", "-", "--server", server.absoluteString, "--cache", cache.path],
            input: receipt, memoryCap: memoryCap)
    }

    static func scratch() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-hostile-\(UUID().uuidString)")
    }

    // MARK: - #15 item 3: bad URLs

    @Test func aGrantWithABadContentURLFailsWithATypedErrorInsteadOfTrapping() async throws {
        let server = try HostileHTTPServer { request in
            request.path == "/v1/downloads" ? .json(200, Self.grant(url: "Contents/a.bin")) : .json(404, "{}")
        }
        defer { server.stop() }
        let cache = Self.scratch()
        defer { try? FileManager.default.removeItem(at: cache) }
        let outcome = try await Self.kioskGet(server.baseURL, cache: cache)
        #expect(outcome.exitStatus == 1, "\(outcome)")
        #expect(outcome.standardError.contains("Contents/a.bin"), "\(outcome)")
        #expect(!server.requests.contains { $0.hasPrefix("GET") }, "no content request: \(server.requests)")
    }

    @Test func aJournaledGrantWithABadURLIsDroppedAndTheDownloadResumesKeepingVerifiedFiles() async throws {
        try await TestServer.with { server in
            let files = ["Contents/a.bin": Support.randomData(300_000), "Contents/b.bin": Support.randomData(200_000)]
            try await Support.publish(Self.product, version: "1.0", files: files, on: server)
            let purchase = try await server.buy(Self.product)
            var grant = try await server.grant(Self.product, receipt: purchase.receiptData)
            // The grant as an older KioskKit journaled it: a bad URL, trusted until 2099.
            let a = try #require(grant.files.firstIndex { $0.path == "Contents/a.bin" })
            grant.files[a].url = "Contents/a.bin"
            grant.expiresAt = Date(timeIntervalSince1970: 4_070_908_800)
            let cache = server.makeScratchDirectory()
            let layout = CacheLayout(root: cache)
            let staged = layout.stagedFile(productID: Self.product, path: "Contents/b.bin")
            try FileManager.default.createDirectory(
                at: staged.deletingLastPathComponent(), withIntermediateDirectories: true)
            try files["Contents/b.bin"]!.write(to: staged)
            let record = DownloadRecord(
                id: DownloadID(), productID: Self.product, receipt: purchase.receiptData, priority: .normal,
                sequence: 0, state: .active, attempt: 0, grant: grant, entityTags: [:],
                verifiedPaths: ["Contents/b.bin"], integrityFailures: [:], createdAt: Date())
            try Journal(layout: layout).replace(with: JournalSnapshot(nextSequence: 1, downloads: [record]))
            let before = server.contentBytesSent

            let outcome = try await ChildProcess.runKiosk(
                [
                    "get", Self.product, "--receipt", "-", "--server", server.baseURL.absoluteString, "--cache",
                    cache.path,
                ],
                input: Data(purchase.receiptData.utf8))
            #expect(outcome.exitStatus == 0, "\(outcome)")
            let installed = layout.content(productID: Self.product, version: "1.0")
            for (path, data) in files {
                #expect(try Data(contentsOf: installed.appendingPathComponent(path)) == data, "\(path)")
            }
            // The verified file was kept: only a.bin crossed the wire.
            #expect(try await Support.settledBytesSent(server) - before == 300_000)
        }
    }

    // MARK: - #15 item 4: answers without a size or time limit

    /// The peak memory `kiosk get` may reach against a bomb: 64 MiB plus the 16 MiB default limit.
    static let memoryBound = (64 << 20) + (16 << 20)

    /// A gzip bomb and an endless chunked body as the grant answer: `kiosk get` fails at the limit, naming it, in
    /// bounded memory.
    @Test(arguments: ["gzip bomb", "endless body"])
    func anUnboundedGrantAnswerFailsAtTheLimitInBoundedMemory(_ kind: String) async throws {
        let server = try HostileHTTPServer { _ in
            kind == "gzip bomb" ? .gzipBomb(decodedBytes: 1 << 30) : .endlessChunked
        }
        defer { server.stop() }
        let cache = Self.scratch()
        defer { try? FileManager.default.removeItem(at: cache) }
        let outcome = try await Self.kioskGet(server.baseURL, cache: cache, memoryCap: 4 * Self.memoryBound)
        #expect(outcome.exitStatus == 1, "\(outcome)")
        #expect(outcome.peakRSS < Self.memoryBound, "\(outcome)")
        #expect(outcome.standardError.contains("16 MiB"), "\(outcome)")
        print("\(kind): kiosk get \(outcome)")
    }

    // MARK: - A server without the change feed

    /// An older server ignores `?since=` and answers the whole catalog: the second run, which has a catalog kept from
    /// the first, falls back to the plain catalog instead of failing to decode a feed page.
    @Test func aServerIgnoringSinceStillServesTheCatalogFromTheSecondRunOn() async throws {
        let catalog = try String(
            decoding: JSONSerialization.data(withJSONObject: [
                "products": [
                    [
                        "id": Self.product, "type": "non_consumable", "title": "Issue", "description": "",
                        "content_version": "1.0", "content_length": 3, "file_count": 1,
                    ]
                ],
                "invalid_product_ids": [String](),
            ]), as: UTF8.self)
        let server = try HostileHTTPServer { request in
            request.path == "/v1/products" ? .json(200, catalog, headers: [("ETag", "\"v1\"")]) : .json(404, "{}")
        }
        defer { server.stop() }
        let cache = Self.scratch()
        defer { try? FileManager.default.removeItem(at: cache) }
        for run in 1...2 {
            let products = try await ChildProcess.runKiosk(
                ["products", "--server", server.baseURL.absoluteString, "--cache", cache.path])
            #expect(products.exitStatus == 0, "run \(run): \(products)")
            #expect(products.standardOutput.contains(Self.product), "run \(run): \(products)")
        }
        // The first run fetches the catalog; the second asks for the feed, gets the catalog, and fetches it again.
        #expect(server.requests == Array(repeating: "GET /v1/products", count: 3), "\(server.requests)")
    }

    // MARK: - #15 item 7: server text on the terminal

    /// Sets the terminal title, clears the screen, reverses the text direction and starts a C1 control sequence.
    static let hostileText = "\u{1B}]0;pwned\u{07}\u{1B}[2J\u{202E}evil\u{2066}\u{9B}31m\u{7F}\u{0D}done"

    static func containsUnsafeScalar(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            let value = scalar.value
            return (value < 0x20 && value != 0x0A) || (0x7F...0x9F).contains(value) || value == 0x061C
                || value == 0x200E || value == 0x200F || (0x202A...0x202E).contains(value)
                || (0x2066...0x2069).contains(value)
        }
    }

    @Test func serverTextIsEscapedBeforeItReachesTheTerminal() async throws {
        let text = Self.hostileText
        let envelope = try String(
            decoding: JSONSerialization.data(withJSONObject: [
                "error": ["code": "not_entitled" + text, "message": text]
            ]), as: UTF8.self)
        let catalog = try String(
            decoding: JSONSerialization.data(withJSONObject: [
                "products": [
                    [
                        "id": Self.product, "type": "non_consumable", "title": text, "description": text,
                        "content_version": "1.0", "content_length": 3, "file_count": 1,
                    ]
                ],
                "invalid_product_ids": [text],
            ]), as: UTF8.self)
        let server = try HostileHTTPServer { request in
            request.path == "/v1/products" ? .json(200, catalog) : .json(403, envelope)
        }
        defer { server.stop() }
        let cache = Self.scratch()
        defer { try? FileManager.default.removeItem(at: cache) }

        let get = try await Self.kioskGet(server.baseURL, cache: cache)
        #expect(get.exitStatus == 1, "\(get)")
        #expect(get.standardError.contains("pwned"), "\(get)")
        #expect(!Self.containsUnsafeScalar(get.standardError), "\(get)")

        for arguments in [["products"], ["products", "--json"]] {
            let products = try await ChildProcess.runKiosk(
                arguments + ["--server", server.baseURL.absoluteString, "--cache", cache.path])
            #expect(products.exitStatus == 0, "\(arguments): \(products)")
            #expect(products.standardOutput.contains("pwned"), "\(arguments): \(products.standardOutput)")
            #expect(
                !Self.containsUnsafeScalar(products.standardOutput),
                "\(arguments): \(products.standardOutput.debugDescription)")
        }
    }

    // MARK: - #15 item 4 in process: the limit is the configuration's, and answers have a deadline

    /// A client of `server` whose JSON answers are limited to `limit` bytes and `deadline` seconds.
    static func client(_ server: HostileHTTPServer, limit: Int = 16 << 20, deadline: TimeInterval = 120) async throws
        -> KioskClient
    {
        var configuration = KioskClient.Configuration()
        configuration.maximumResponseSize = limit
        configuration.jsonRequestDeadline = deadline
        return try await KioskClient(serverURL: server.baseURL, cacheRoot: scratch(), configuration: configuration)
    }

    @Test func theResponseLimitIsAConfigurationValueNamedInTheError() async throws {
        let server = try HostileHTTPServer { _ in .gzipBomb(decodedBytes: 8 << 20) }
        defer { server.stop() }
        let client = try await Self.client(server, limit: 1 << 20)
        await #expect(throws: KioskError.responseTooLarge(limit: 1 << 20)) { try await client.products() }
        #expect(KioskError.responseTooLarge(limit: 1 << 20).description.contains("1 MiB"))
        await client.close()
        // Under a larger limit, the same answer is read to its end (where the bomb's zero CRC-32 fails it).
        let roomy = try await Self.client(server, limit: 16 << 20)
        do {
            _ = try await roomy.products()
            Issue.record("a body of zeros was read as a catalog")
        } catch {
            #expect(error.code != "response_too_large")
        }
        await roomy.close()
    }

    @Test func anAnswerThatDripsForEverEndsAtTheDeadline() async throws {
        let server = try HostileHTTPServer { _ in .drip(interval: .milliseconds(100)) }
        defer { server.stop() }
        let client = try await Self.client(server, deadline: 1)
        let start = ContinuousClock.now
        do {
            _ = try await client.products()
            Issue.record("a dripping answer was read")
        } catch {
            #expect(error.code == "network")
            #expect(error.description.contains("within 1 s"))
        }
        #expect(ContinuousClock.now - start < .seconds(30))
        await client.close()
    }

    /// A content answer that stops sending fails within the idle timeout (``KioskClient/Configuration/requestTimeout``)
    /// with a network error that the retry rule counts, whichever transport fetches content on this platform
    /// (AsyncHTTPClient on Linux, URLSession elsewhere).
    @Test func aContentAnswerThatStallsFailsWithinTheIdleTimeout() async throws {
        let server = try HostileHTTPServer { _ in .drip(interval: .seconds(4)) }
        defer { server.stop() }
        let folder = Self.scratch()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fetcher = FileFetcher(timeout: 1, maximumConnections: 2, writerFactory: .posix)
        defer { fetcher.invalidate() }
        // The drip answers 200 application/json with 100,000,000 bytes announced: a JSON file, fetched whole.
        let request = FetchRequest(
            url: server.baseURL.appendingPathComponent("stall.json"), token: "t", offset: 0,
            expectedLength: 100_000_000, partURL: folder.appendingPathComponent("stall.json.part"))
        let start = ContinuousClock.now
        do {
            _ = try await fetcher.fetch(request, hasher: SHA256(), progress: { _ in })
            Issue.record("a stalled answer was read")
        } catch KioskError.network(let code, _) {
            #expect(code == URLError.timedOut.rawValue, "code \(code)")
        }
        #expect(ContinuousClock.now - start < .seconds(4), "the stall was waited out: \(ContinuousClock.now - start)")
    }

    /// A redirect of a content request is not followed (it would carry the grant's token to wherever it points):
    /// it fails as the status it is, after one request.
    @Test func aRedirectedContentRequestIsNotFollowed() async throws {
        let server = try HostileHTTPServer { request in
            request.path == "/elsewhere"
                ? .complete(status: 200, headers: [], body: Data("stolen".utf8))
                : .complete(status: 302, headers: [("Location", "/elsewhere")], body: Data())
        }
        defer { server.stop() }
        let folder = Self.scratch()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fetcher = FileFetcher(timeout: 5, maximumConnections: 2, writerFactory: .posix, environment: [:])
        let request = FetchRequest(
            url: server.baseURL.appendingPathComponent("content.bin"), token: "t", offset: 0, expectedLength: 6,
            partURL: folder.appendingPathComponent("content.bin.part"))
        for transport in [
            fetcher.transport,
            URLSessionSegmentTransport(timeout: 5, maximumConnections: 2, sessionConfiguration: nil),
        ] {
            let fetcher = FileFetcher(transport: transport, writerFactory: .posix)
            do {
                _ = try await fetcher.fetch(request, hasher: SHA256(), progress: { _ in })
                Issue.record("a redirect was followed through \(type(of: transport))")
            } catch KioskError.server(let status, _, _, _) {
                #expect(status == 302)
            }
            transport.invalidate()
        }
        #expect(server.requests == ["GET /content.bin", "GET /content.bin"])
    }

    /// Through AsyncHTTPClient, each piece of a chunk's range is written where it arrives: on the event loop that
    /// read it, one of the transport's own (not the process-wide singleton's), with no copy into blocks and no
    /// hand-off to another thread. URLSession's pieces go through blocks to the transfer's I/O queue. Both give the
    /// exact bytes, in requests of at most the segment size.
    @Test func theNIOTransportWritesEachPieceOnItsOwnEventLoop() async throws {
        #if canImport(AsyncHTTPClient) && os(Linux)
            let body = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) })
            let server = try HostileHTTPServer { request in
                let range = request.headers.first { $0.0.lowercased() == "range" }?.1 ?? ""
                let bounds = range.dropFirst("bytes=".count).split(separator: "-").compactMap { Int($0) }
                guard bounds.count == 2 else { return .json(416, "{}") }
                return .complete(
                    status: 206,
                    headers: [
                        ("Content-Type", "application/octet-stream"),
                        ("Content-Range", "bytes \(bounds[0])-\(bounds[1])/\(body.count)"),
                    ],
                    body: body[bounds[0]...bounds[1]])
            }
            defer { server.stop() }
            let folder = Self.scratch()
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let nio = NIOSegmentTransport(timeout: 5, maximumConnections: 2)
            #expect(nio.delivery == .inline)
            let urlSession = URLSessionSegmentTransport(timeout: 5, maximumConnections: 2, sessionConfiguration: nil)
            #expect(urlSession.delivery == .queued)
            for (transport, onLoop) in [(nio as any SegmentTransport, true), (urlSession, false)] {
                let part = folder.appendingPathComponent("content-\(onLoop).bin.part")
                let writes = Locked((onTheLoop: 0, elsewhere: 0))
                let writer = WriterOnThread(try POSIXPartFileWriter(url: part, truncatingTo: 0)) {
                    let loop = MultiThreadedEventLoopGroup.currentEventLoop
                    let ours = loop.map { loop in nio.group.makeIterator().contains { $0 === loop } } ?? false
                    writes.withLock { ours ? ($0.onTheLoop += 1) : ($0.elsewhere += 1) }
                }
                let request = FetchRequest(
                    url: server.baseURL.appendingPathComponent("content.bin"), token: "t", offset: 0,
                    expectedLength: Int64(body.count), partURL: part)
                try await FileFetcher(transport: transport, writerFactory: .posix)
                    .fetchRange(request, into: writer, blocks: nil, segmentSize: 1 << 20)
                writer.close()
                #expect(try Data(contentsOf: part) == body)
                let counted = writes.withLock { $0 }
                if onLoop {
                    #expect(counted.onTheLoop > 0 && counted.elsewhere == 0, "\(counted)")
                } else {
                    #expect(counted.onTheLoop == 0 && counted.elsewhere > 0, "\(counted)")
                }
                transport.invalidate()
            }
            #expect(server.requests.count == 6)
        #endif
    }

    // MARK: - #9: cancellation of in-flight requests

    @Test func cancellingTheCallerCancelsAJSONRequestAtOnce() async throws {
        let server = try HostileHTTPServer { _ in .drip(interval: .milliseconds(100)) }
        defer { server.stop() }
        let client = try await Self.client(server)
        let start = ContinuousClock.now
        let call = Task { try await client.products() }
        try await Task.sleep(for: .milliseconds(300))
        call.cancel()
        do {
            _ = try await call.value
            Issue.record("a dripping answer was read")
        } catch {
            #expect((error as? KioskError)?.code == "network")
            #expect((error as? KioskError)?.description.contains("cancelled") == true)
        }
        // The deadline is 120 s and the drip lasts 10 minutes: only the cancellation ends the call this soon.
        #expect(ContinuousClock.now - start < .seconds(30))
        await client.close()
    }

    @Test func pauseAndCloseDoNotWaitForAGrantRequestInFlight() async throws {
        let server = try HostileHTTPServer { request in
            request.path == "/v1/downloads" ? .drip(interval: .milliseconds(100)) : .json(404, "{}")
        }
        defer { server.stop() }
        let client = try await Self.client(server)
        let start = ContinuousClock.now
        _ = try await client.enqueue(productID: Self.product, receipt: Self.receipt)
        try await Support.eventually("the grant request reaches the server", timeout: 30) {
            server.requests.contains("POST /v1/downloads")
        }
        try await client.pause(Self.product)
        #expect(await client.download(for: Self.product)?.state == .paused(.user))
        await client.close()
        // Before, each waited out the request timeout (60 s by default; 120 s deadline here).
        #expect(ContinuousClock.now - start < .seconds(30))
    }

    @Test func cancellingAWaitUntilInstalledEndsThatWaitAlone() async throws {
        let server = try HostileHTTPServer { request in
            request.path == "/v1/downloads" ? .drip(interval: .milliseconds(100)) : .json(404, "{}")
        }
        defer { server.stop() }
        let client = try await Self.client(server)
        _ = try await client.enqueue(productID: Self.product, receipt: Self.receipt)
        let cancelled = Task { try await client.waitUntilInstalled(productID: Self.product) }
        let other = Task { try await client.waitUntilInstalled(productID: Self.product) }
        try await Task.sleep(for: .milliseconds(200))
        cancelled.cancel()
        await #expect(throws: KioskError.waitCancelled(productID: Self.product)) { try await cancelled.value }
        // The download and the other wait go on until the client closes.
        #expect(await client.download(for: Self.product)?.state.isTerminal == false)
        await client.close()
        await #expect(throws: KioskError.clientClosed) { try await other.value }
    }

    @Test func aBadContentURLIsATypedErrorInProcess() async throws {
        let server = try HostileHTTPServer { request in
            request.path == "/v1/downloads"
                ? .json(200, Self.grant(url: "/v1/content/other/1.0/Contents/a.bin")) : .json(404, "{}")
        }
        defer { server.stop() }
        let client = try await Self.client(server)
        try await client.enqueue(productID: Self.product, receipt: "cmVjZWlwdA==")
        await #expect(
            throws: KioskError.unsafeGrant(
                productID: Self.product,
                problem: .contentURL(path: "Contents/a.bin", url: "/v1/content/other/1.0/Contents/a.bin"))
        ) {
            _ = try await client.waitUntilInstalled(productID: Self.product)
        }
        await client.close()
    }

    @Test func plainHTTPToARemoteHostNeedsTheOptIn() async throws {
        let remote = URL(string: "http://kiosk.example.com")!
        await #expect(throws: KioskError.insecureServerURL(host: "kiosk.example.com")) {
            _ = try await KioskClient(serverURL: remote, cacheRoot: Self.scratch())
        }
        var configuration = KioskClient.Configuration()
        configuration.allowsInsecureHTTP = true
        let client = try await KioskClient(serverURL: remote, cacheRoot: Self.scratch(), configuration: configuration)
        await client.close()
    }

    // MARK: - Also fix: plain http:// to a remote host

    @Test func aPlainHTTPServerURLForARemoteHostIsRefusedAtCreation() async throws {
        let cache = Self.scratch()
        defer { try? FileManager.default.removeItem(at: cache) }
        await #expect(throws: KioskError.self) {
            let client = try await KioskClient(serverURL: URL(string: "http://kiosk.example.com")!, cacheRoot: cache)
            await client.close()
        }
    }

    // MARK: - Also fix: links planted in the cache

    @Test func aSymbolicLinkPlantedInTheCacheDoesNotRedirectAWrite() async throws {
        try await TestServer.with { server in
            let files = ["Contents/a.bin": Support.randomData(8 << 20)]
            try await Support.publish(Self.product, version: "1.0", files: files, on: server)
            let purchase = try await server.buy(Self.product)
            let cache = server.makeScratchDirectory()
            let victim = server.makeScratchDirectory()
            try FileManager.default.createDirectory(at: victim, withIntermediateDirectories: true)
            let victimFile = victim.appendingPathComponent("victim")
            let original = Data("do not overwrite me".utf8)
            try original.write(to: victimFile)

            // A download stopped halfway leaves its part file; then the part file and the journal's temporary file
            // are replaced with links to the victim.
            var configuration = KioskClient.Configuration()
            configuration.fileWriterFactory = TestWriter.factory(delay: 0.3)
            let first = try await KioskClient(serverURL: server.baseURL, cacheRoot: cache, configuration: configuration)
            try await first.enqueue(productID: Self.product, receipt: purchase.receiptData)
            let part = Support.partFile(first, Self.product, "Contents/a.bin")
            try await Support.eventually("a part file") { Support.fileSize(part) > 0 }
            try await first.pause(Self.product)
            #expect(await first.installedContent(for: Self.product) == nil, "stopped halfway")
            await first.close()
            try FileManager.default.removeItem(at: part)
            try FileManager.default.createSymbolicLink(at: part, withDestinationURL: victimFile)

            let second = try await KioskClient(serverURL: server.baseURL, cacheRoot: cache)
            let temporary = cache.appendingPathComponent("journal.json.tmp")
            try FileManager.default.createSymbolicLink(at: temporary, withDestinationURL: victimFile)
            try await second.resume(Self.product)
            _ = try? await second.waitUntilInstalled(productID: Self.product)
            await second.close()
            #expect(try Data(contentsOf: victimFile) == original)
        }
    }
}

/// A positional writer that calls `observe` on the thread of each write, then writes through `base`.
private final class WriterOnThread: PositionalPartFileWriter {
    let base: POSIXPartFileWriter
    let observe: @Sendable () -> Void

    init(_ base: POSIXPartFileWriter, observe: @escaping @Sendable () -> Void) {
        self.base = base
        self.observe = observe
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(KioskError) {
        observe()
        try base.write(bytes)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(KioskError) {
        observe()
        try base.write(bytes, at: offset)
    }

    func synchronize() throws(KioskError) { try base.synchronize() }

    func close() { base.close() }
}
