import AsyncHTTPClient
import Crypto
import Foundation
import KioskCore
import KioskServerTestSupport
import Logging
import NIOCore
import NIOHTTP1
import Testing

@testable import KioskServer

/// A real Kiosk server on an ephemeral loopback port over a temporary content folder of one product, signing grants
/// with a known secret so that the tests sign their own tokens.
struct SubchunkTestServer {
    static let product = "com.example.delta"
    static let secret = String(repeating: "s", count: 32)

    let content: ServerTestDirectory
    let live: LiveKioskServer
    let log: LogRecorder

    /// The bound port.
    var port: Int { live.port }
    /// The running server.
    var server: KioskHTTPServer { live.server }

    /// Runs `body` against a server serving `files` (paths below the product folder), then stops it. Started by
    /// the end-to-end tests' starter (``LiveKioskServer``), on a configuration of its own: a one-product content
    /// folder and a known grant secret.
    static func with(files: [String: Data], _ body: (SubchunkTestServer) async throws -> Void) async throws {
        let content = try ServerTestDirectory("subchunk-content")
        let data = try ServerTestDirectory("subchunk-data")
        try content.writeProduct(id: product, files: files)
        var configuration = ServerConfiguration.forTests(content: content.url, data: data.url)
        configuration.grantSecret = secret
        let log = LogRecorder()
        let live = try await LiveKioskServer.start(configuration: configuration, logger: log.logger)
        do {
            try await body(SubchunkTestServer(content: content, live: live, log: log))
        } catch {
            await live.stop()
            throw error
        }
        await live.stop()
    }

    /// A token for `version` of the product, live for a minute.
    func token(version: String = "1.0") throws -> String {
        let signer = GrantSigner(keyring: try GrantKeyring.fromSecret(Self.secret, keyID: "env"))
        return signer.sign(
            GrantClaims(
                productID: Self.product, contentVersion: version, transactionID: "2000000000000001",
                expiresAt: Int64(Date().timeIntervalSince1970) + 60, originalTransactionID: "2000000000000001"))
    }

    /// The subchunk resource of a file, as a client builds it from the grant.
    static func subchunksPath(_ file: String, version: String = "1.0") -> String {
        GrantURLs.subchunks(product: product, version: version) + "/" + file
    }

    /// The content resource of a file.
    static func contentPath(_ file: String, version: String = "1.0") -> String {
        GrantURLs.content(product: product, version: version, path: file)
    }

    /// A GET of `target` (path and query) with the token as a bearer, if any.
    func get(_ target: String, token: String? = nil) async throws -> (status: Int, headers: HTTPHeaders, body: Data) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(target)")
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 16 << 20)
        return (Int(response.status.code), response.headers, Data(buffer: body))
    }

    /// The current catalog's entry for a file of the product.
    func manifestFile(_ path: String) throws -> ManifestFile {
        try #require(server.catalog.snapshot.products[Self.product]?.file(atPath: path))
    }
}

@Suite("Subchunk routes")
struct SubchunkRoutesTests {
    typealias T = SubchunkTestServer

    /// 5 MiB of pseudo-random bytes: several chunks of the standard chunking.
    static let big = FileChunkingTests.randomBytes(5 << 20, seed: 10)
    static let bigPath = "Contents/big.bin"
    static let smallPath = "Contents/small.txt"
    static let files = [bigPath: big, smallPath: Data("one chunk".utf8)]

    private func envelope(_ body: Data) throws -> APIErrorEnvelope.Body {
        try KioskJSON.decode(APIErrorEnvelope.self, from: body).error
    }

    private func sha256(_ bytes: Data) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    /// Checks that `cut` is chunk `chunk` of `file` cut from its first byte: contiguous subchunks from the chunk's
    /// offset to its end, within the subchunk limits, hashing to the file's bytes, and the chunker's own lengths.
    private func expectCuts(_ cut: ChunkSubchunks, chunk: GrantChunk, of file: Data) {
        let limits = ChunkingParameters.subchunks
        var offset = chunk.offset
        for (position, subchunk) in cut.subchunks.enumerated() {
            #expect(subchunk.offset == offset, "chunk \(cut.index), subchunk \(position)")
            #expect(subchunk.length > 0 && subchunk.length <= limits.maximum)
            if position < cut.subchunks.count - 1 { #expect(subchunk.length >= limits.minimum) }
            let bytes = file[Int(subchunk.offset)..<Int(subchunk.offset + subchunk.length)]
            #expect(subchunk.sha256 == sha256(bytes), "chunk \(cut.index), subchunk \(position)")
            offset += subchunk.length
        }
        #expect(offset == chunk.offset + chunk.length, "the subchunks of chunk \(cut.index) cover it")
        let bytes = file[Int(chunk.offset)..<Int(chunk.offset + chunk.length)]
        let lengths = bytes.withUnsafeBytes { ContentDefinedChunker.chunkLengths(of: $0, parameters: limits) }
        #expect(cut.subchunks.map { Int($0.length) } == lengths)
    }

    @Test func eachRequestedChunkIsCutFromItsFirstByteInTheOrderAsked() async throws {
        try await T.with(files: Self.files) { server in
            let chunks = try #require(try server.manifestFile(Self.bigPath).grantChunks)
            #expect(chunks.count >= 3, "the file has several chunks")
            let asked = [chunks.count - 1, 0] + Array(1..<(chunks.count - 1)).reversed()
            let response = try await server.get(
                T.subchunksPath(Self.bigPath) + "?chunks=" + asked.map(String.init).joined(separator: ","),
                token: try server.token())
            #expect(response.status == 200)
            #expect(response.headers.first(name: "Content-Type")?.hasPrefix("application/json") == true)
            #expect(response.headers.first(name: "Cache-Control") == "private")
            let list = try KioskJSON.decode(SubchunkList.self, from: response.body)
            #expect(list.chunking == .subchunks)
            #expect(list.chunks.map(\.index) == asked)
            for cut in list.chunks { expectCuts(cut, chunk: chunks[cut.index], of: Self.big) }
            #expect(list.chunks.allSatisfy { $0.subchunks.count > 1 }, "a megabyte chunk has many subchunks")
            #expect(server.log.count(of: "subchunk request") == 1)
            // The answer's bytes are counted apart from content.
            #expect(
                server.server.metrics.exposition().contains(
                    "kiosk_subchunk_bytes_sent_total \(response.body.count)\n"))
            #expect(server.server.metrics.contentBytesSentSoFar == 0)
        }
    }

    /// 16 copies of one request, sent at once with one token, cut each chunk once: the server reads the chunks'
    /// bytes once, not once per copy (#27 flaw 5).
    @Test func concurrentIdenticalRequestsReadEachChunkOnce() async throws {
        let file = FileChunkingTests.randomBytes(16 << 20, seed: 27)
        try await T.with(files: [Self.bigPath: file]) { server in
            let chunks = try #require(try server.manifestFile(Self.bigPath).grantChunks)
            let target =
                T.subchunksPath(Self.bigPath) + "?chunks=" + chunks.indices.map(String.init).joined(separator: ",")
            let token = try server.token()
            let answers = try await withThrowingTaskGroup(of: (status: Int, body: Data).self) { group in
                for _ in 0..<16 {
                    group.addTask {
                        let response = try await server.get(target, token: token)
                        return (response.status, response.body)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.map(\.status) == Array(repeating: 200, count: 16))
            #expect(Set(answers.map(\.body)).count == 1, "every copy gets the same answer")
            let bytes = chunks.reduce(0) { $0 + $1.length }
            let work = server.server.metrics.subchunkWorkSoFar
            #expect(
                work.bytes == bytes,
                "16 requests for \(chunks.count) chunks of \(bytes) bytes read \(work.bytes) bytes")
            #expect(work.chunks == chunks.count, "\(chunks.count) chunks were cut \(work.chunks) times")
        }
    }

    @Test func theAnswerIsSnakeCaseJSONWithAbsoluteOffsets() async throws {
        try await T.with(files: Self.files) { server in
            let chunks = try #require(try server.manifestFile(Self.bigPath).grantChunks)
            // The token in the query, as content allows.
            let response = try await server.get(T.subchunksPath(Self.bigPath) + "?chunks=1&token=\(try server.token())")
            #expect(response.status == 200)
            let json = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
            #expect(Set(json.keys) == ["chunking", "chunks"])
            let first = try #require((json["chunks"] as? [[String: Any]])?.first)
            #expect(first["index"] as? Int == 1)
            let subchunk = try #require((first["subchunks"] as? [[String: Any]])?.first)
            #expect(Set(subchunk.keys) == ["offset", "length", "sha256"])
            #expect((subchunk["offset"] as? NSNumber)?.int64Value == chunks[1].offset)
        }
    }

    @Test func badChunkListsAreRefusedWithTheEnvelope() async throws {
        try await T.with(files: Self.files) { server in
            let count = try #require(try server.manifestFile(Self.bigPath).grantChunks).count
            let token = try server.token()
            let sixtyFive = (0..<65).map(String.init).joined(separator: ",")
            let queries = [
                "", "?chunks=", "?chunks=a", "?chunks=-1", "?chunks=1,1", "?chunks=\(count)", "?chunks=0,\(count + 7)",
                "?chunks=\(sixtyFive)", "?chunks=+1", "?chunks=%201", "?chunks=1%20", "?chunks=1,", "?chunks=,1",
                "?chunks=0x1", "?chunks=1.0", "?chunks=99999999999999999999", "?chunks=0&chunks=1",
            ]
            for query in queries {
                let response = try await server.get(T.subchunksPath(Self.bigPath) + query, token: token)
                #expect(response.status == 400, "\(query)")
                let error = try envelope(response.body)
                #expect(error.code == "bad_request", "\(query)")
                #expect(!error.message.isEmpty)
                #expect(!error.message.contains(token))
            }
            let outside = try await server.get(T.subchunksPath(Self.bigPath) + "?chunks=\(count)", token: token)
            #expect(
                try envelope(outside.body).message
                    == "There is no chunk \(count): the file has \(count) chunks, 0 to \(count - 1).")
        }
    }

    @Test func aFileOfOneChunkHasNoSubchunks() async throws {
        try await T.with(files: Self.files) { server in
            let response = try await server.get(
                T.subchunksPath(Self.smallPath) + "?chunks=0", token: try server.token())
            #expect(response.status == 400)
            let error = try envelope(response.body)
            #expect(error.code == "bad_request")
            #expect(error.message.contains("has no chunks"))
        }
    }

    @Test func admissionIsThatOfContent() async throws {
        try await T.with(files: Self.files) { server in
            let live = try server.token()
            let cases: [(file: String, version: String, token: String?, status: Int)] = [
                (Self.bigPath, "1.0", nil, 401),
                (Self.bigPath, "1.0", "not-a-token", 401),
                (Self.bigPath, "1.0", try server.token(version: "2.0"), 403),
                (Self.bigPath, "0.9", try server.token(version: "0.9"), 410),
                ("Contents/missing.bin", "1.0", live, 404),
            ]
            for (file, version, token, status) in cases {
                let content = try await server.get(T.contentPath(file, version: version), token: token)
                let subchunks = try await server.get(
                    T.subchunksPath(file, version: version) + "?chunks=0", token: token)
                #expect(content.status == status, "\(file) \(version)")
                #expect(subchunks.status == status, "\(file) \(version)")
                #expect(try envelope(subchunks.body).code == (try envelope(content.body).code))
                #expect(
                    subchunks.headers.first(name: "WWW-Authenticate") == content.headers.first(name: "WWW-Authenticate")
                )
            }
            // A path that is not one: the content route's rules.
            for bad in ["/v1/subchunks/\(T.product)/1.0", "/v1/subchunks/\(T.product)/1.0/Contents/%2e%2e/x"] {
                let response = try await server.get(bad + "?chunks=0", token: live)
                #expect(response.status == 400, "\(bad)")
                #expect(try envelope(response.body).code == "bad_request")
            }
        }
    }

    @Test func aFileChangedOnDiskIsDescribedAsItIsNow() async throws {
        try await T.with(files: Self.files) { server in
            let token = try server.token()
            let target = T.subchunksPath(Self.bigPath) + "?chunks=0,1"
            #expect(try await server.get(target, token: token).status == 200)
            // The same file, rewritten in place with other bytes: the catalog hashes it again before answering.
            let changed = FileChunkingTests.randomBytes(Self.big.count, seed: 77)
            let handle = try FileHandle(forWritingTo: server.content.url("\(T.product)/\(Self.bigPath)"))
            try handle.write(contentsOf: changed)
            try handle.close()
            let response = try await server.get(target, token: token)
            #expect(response.status == 200)
            let chunks = try #require(try server.manifestFile(Self.bigPath).grantChunks)
            let list = try KioskJSON.decode(SubchunkList.self, from: response.body)
            for cut in list.chunks { expectCuts(cut, chunk: chunks[cut.index], of: changed) }
        }
    }
}

@Suite("Subchunk paths")
struct SubchunkPathTests {
    /// The content route's own cases, under the subchunk prefix: the same paths are accepted, with the same parts.
    @Test(arguments: [
        "p/1.0/Contents/issue.pdf", "p/1.0/Contents/My%20Issue.pdf", "p/1.0/x", "p/1.0/Contents/../secret",
        "p/1.0/Contents/a%2fb", "p/1.0/Contents//x", "p/1.0", "p/1.0/Contents/a%00", "bad%20id/1.0/Contents/x",
    ])
    func subchunkPathsFollowTheContentRules(rest: String) {
        let content = ContentRoutes.parse(rawPath: "/v1/content/" + rest)
        #expect(ContentPath(rawPath: "/v1/subchunks/" + rest, under: "/v1/subchunks/") == content)
        #expect(ContentPath(rawPath: "/v1/content/" + rest, under: "/v1/subchunks/") == nil)
    }
}

@Suite("Subchunk service")
struct SubchunkServiceTests {
    @Test(arguments: [
        ("0", [0]), ("3,0,2", [3, 0, 2]), ("007", [7]), ("123456789", [123_456_789]),
        ((0..<64).map(String.init).joined(separator: ","), Array(0..<64)),
    ])
    func validListsParseInOrder(query: String, expected: [Int]) throws {
        #expect(try SubchunkService.chunkIndexes([query]) == expected)
    }

    @Test(
        arguments: [
            ([], SubchunkRefusal.chunkListMissing), ([""], .chunkListMissing), (["0", "1"], .chunkListMissing),
            (["a"], .malformedChunkIndex("a")), (["-1"], .malformedChunkIndex("-1")),
            (["+1"], .malformedChunkIndex("+1")),
            ([" 1"], .malformedChunkIndex(" 1")), (["1,"], .malformedChunkIndex("")),
            (["1234567890"], .malformedChunkIndex("1234567890")),
            (["1,1"], .duplicateChunk(1)), ([(0..<65).map(String.init).joined(separator: ",")], .tooManyChunks(65)),
        ] as [([String], SubchunkRefusal)])
    func invalidListsAreRefused(query: [String], expected: SubchunkRefusal) {
        #expect(throws: expected) { try SubchunkService.chunkIndexes(query) }
        #expect(expected.errorCode == .badRequest)
    }

    /// A chunk whose bytes changed after the file was opened (in place, behind the catalog) is refused, not cut.
    /// A product with one 3 MiB file of random bytes from `seed`, cataloged, and that file opened; the folder lives
    /// as long as the returned value.
    private func openedFile(seed: UInt64) async throws
        -> (content: ServerTestDirectory, big: Data, file: ManifestFile, opened: OpenContentFile)
    {
        let content = try ServerTestDirectory("subchunk-service")
        let big = FileChunkingTests.randomBytes(3 << 20, seed: seed)
        try content.writeProduct(id: "com.example.delta", files: ["Contents/big.bin": big])
        let catalog = await ContentCatalog(
            contentDirectory: content.url, dataDirectory: nil, logger: LogRecorder().logger)
        let file = try #require(catalog.snapshot.products["com.example.delta"]?.file(atPath: "Contents/big.bin"))
        let opened = try #require(await catalog.openFiles.open(file, of: "com.example.delta", at: file.absolutePath))
        return (content, big, file, opened)
    }

    @Test func aChunkThatNoLongerHashesAsCatalogedIsRefused() async throws {
        let (content, big, file, opened) = try await openedFile(seed: 5)
        defer { withExtendedLifetime(content) {} }
        let before = try await SubchunkCutter().subchunks(of: opened, chunks: [1, 0], for: Self.claims())
        #expect(before.chunks.map(\.index) == [1, 0])

        // One byte of chunk 1 flipped through the descriptor's file: chunk 0 still cuts, chunk 1 is refused.
        let second = try #require(file.grantChunks?[1])
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file.absolutePath))
        try handle.seek(toOffset: UInt64(second.offset + 10))
        try handle.write(contentsOf: Data([big[Int(second.offset) + 10] ^ 0xFF]))
        try handle.close()
        #expect(try await SubchunkCutter().subchunks(of: opened, chunks: [0], for: Self.claims()).chunks.count == 1)
        await #expect(throws: ContentRefusal.fileChanging(productID: "com.example.delta", path: "Contents/big.bin")) {
            try await SubchunkCutter().subchunks(of: opened, chunks: [0, 1], for: Self.claims())
        }
        // Truncated: the chunk's bytes are no longer all there.
        let truncating = try FileHandle(forWritingTo: URL(fileURLWithPath: file.absolutePath))
        try truncating.truncate(atOffset: UInt64(second.offset))
        try truncating.close()
        await #expect(throws: ContentRefusal.fileChanging(productID: "com.example.delta", path: "Contents/big.bin")) {
            try await SubchunkCutter().subchunks(of: opened, chunks: [1], for: Self.claims())
        }
        let refusal = ContentRefusal.fileChanging(productID: "com.example.delta", path: "Contents/big.bin")
        #expect(refusal.status.code == 500 && refusal.errorReason == "file_changing")
    }

    /// A chunk is read and cut once: the next request for it (or for the same bytes anywhere) is answered from the
    /// cache, without reading the file.
    @Test func aChunkCutOnceIsAnsweredFromTheCache() async throws {
        let (content, _, file, opened) = try await openedFile(seed: 6)
        defer { withExtendedLifetime(content) {} }
        let cache = SubchunkCache()
        let first = try await SubchunkCutter(cache: cache).subchunks(of: opened, chunks: [1], for: Self.claims())
        #expect(cache.count == 1)

        // The file is cut short behind the catalog: a fresh cache must read it and refuses; this one does not read.
        let truncating = try FileHandle(forWritingTo: URL(fileURLWithPath: file.absolutePath))
        try truncating.truncate(atOffset: 0)
        try truncating.close()
        #expect(try await SubchunkCutter(cache: cache).subchunks(of: opened, chunks: [1], for: Self.claims()) == first)
        await #expect(throws: ContentRefusal.fileChanging(productID: "com.example.delta", path: "Contents/big.bin")) {
            try await SubchunkCutter().subchunks(of: opened, chunks: [1], for: Self.claims())
        }
    }

    /// The claims of a token of purchase `purchase`, told apart from the purchase's other tokens by `expiry`.
    static func claims(expiry: Int64 = 1, purchase: String = "2000000000000001") -> GrantClaims {
        GrantClaims(
            productID: "com.example.delta", contentVersion: "1.0", transactionID: "\(expiry)", expiresAt: expiry,
            originalTransactionID: purchase)
    }

    /// Chunks being cut count once per token and once per purchase however many requests wait for them; a request
    /// that would take either over its bound is refused, and answered chunks make room again.
    @Test func chunksBeingCutAreBoundedPerTokenAndPerPurchase() throws {
        let bounds = SubchunkWorkBounds(tokenLimit: 3, purchaseLimit: 4)
        let keys = (0..<6).map {
            ChunkCutFlights.Key(
                path: "/f", offset: Int64($0), digest: SHA256Digest(SHA256.hash(data: Data([UInt8($0)]))))
        }
        let token = Self.claims(expiry: 1)
        let first = try bounds.admit(Set(keys[0..<3]), for: token)
        let copy = try bounds.admit(Set(keys[0..<3]), for: token)
        #expect(bounds.inFlight(for: token) == (3, 3), "a copy of a request joins its chunks: counted once")
        #expect(throws: SubchunkBusyRefusal.token(limit: 3)) { try bounds.admit([keys[3]], for: token) }

        // Another token of the same purchase: its own bound, and the purchase's.
        let other = Self.claims(expiry: 2)
        let second = try bounds.admit([keys[3]], for: other)
        #expect(throws: SubchunkBusyRefusal.purchase(limit: 4)) { try bounds.admit([keys[4]], for: other) }
        let joining = try bounds.admit([keys[0]], for: other)
        #expect(bounds.inFlight(for: other) == (2, 4), "a chunk the purchase waits for already costs it nothing")
        // Another purchase is not held back.
        let elsewhere = try bounds.admit(Set(keys[3..<6]), for: Self.claims(expiry: 1, purchase: "2000000000000009"))

        bounds.release(first)
        #expect(bounds.inFlight(for: token) == (3, 4), "the copy still waits")
        bounds.release(copy)
        #expect(bounds.inFlight(for: token) == (0, 2))
        _ = try bounds.admit([keys[4]], for: other)
        for admission in [second, joining, elsewhere] { bounds.release(admission) }
    }

    /// Past its bound a request is refused with 429 `too_many_requests` and `Retry-After`, before reading anything;
    /// chunks already cut do not count.
    @Test func aRequestOverTheBoundIsRefusedWith429() async throws {
        let (content, _, _, opened) = try await openedFile(seed: 7)
        defer { withExtendedLifetime(content) {} }
        let metrics = ServerMetrics()
        let cutter = SubchunkCutter(bounds: SubchunkWorkBounds(tokenLimit: 1, purchaseLimit: 1), metrics: metrics)
        let refusal = SubchunkBusyRefusal.token(limit: 1)
        await #expect(throws: refusal) { try await cutter.subchunks(of: opened, chunks: [0, 1], for: Self.claims()) }
        #expect(metrics.subchunkWorkSoFar.bytes == 0)
        _ = try await cutter.subchunks(of: opened, chunks: [0], for: Self.claims())
        _ = try await cutter.subchunks(of: opened, chunks: [1], for: Self.claims())
        #expect(try await cutter.subchunks(of: opened, chunks: [0, 1], for: Self.claims()).chunks.count == 2)
        #expect(metrics.subchunkWorkSoFar.chunks == 2)
        #expect(refusal.status.code == 429 && refusal.errorCode == .tooManyRequests)
        #expect(refusal.headers == ["Retry-After": "1"] && refusal.errorReason == "token_busy")
        #expect(SubchunkBusyRefusal.purchase(limit: 256).errorReason == "purchase_busy")
    }

    @Test func theCacheForgetsTheOldestChunkWhenFull() {
        let digests = (0..<4).map { SHA256Digest(SHA256.hash(data: Data([UInt8($0)]))) }
        let cache = SubchunkCache(capacity: 2)
        for (index, digest) in digests.enumerated() {
            cache.store([FileChunk(length: UInt32(index + 1), digest: digest)], of: digest)
        }
        #expect(cache.count == 2)
        #expect(cache.subchunks(of: digests[0]) == nil && cache.subchunks(of: digests[1]) == nil)
        #expect(cache.subchunks(of: digests[3])?.first?.length == 4)
        cache.store([], of: digests[3])  // stored again: replaced, nothing forgotten
        #expect(cache.count == 2 && cache.subchunks(of: digests[2]) != nil && cache.subchunks(of: digests[3]) == [])
    }
}
