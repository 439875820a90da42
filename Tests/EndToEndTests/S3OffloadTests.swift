import Foundation
import KioskCore
import KioskServer
import Testing

@testable import KioskKit

/// #30: `kiosk serve --offload s3:BUCKET/PREFIX`. The content is pushed to moto_server (`KIOSK_TEST_S3_ENDPOINT`,
/// `.ci/moto.sh`) with `kiosk content push`; grants give each file a presigned URL; the bytes come from the store
/// through a ``PresignedStoreGate``, which checks the URLs' lifetimes as S3 does (moto does not) and records what
/// clients send. Kiosk sends no file byte.
@Suite("Content offloaded to an S3-compatible store", .serialized)
struct S3OffloadTests {
    typealias Support = KioskKitTestSupport
    static let endpoint = ContentPushCommandTests.endpoint
    static let product = "com.example.kiosk.test.s3"
    static let path = "Contents/issue.pdf"

    /// The emulator's port on loopback.
    static func upstreamPort() throws -> Int {
        try #require(endpoint.flatMap(URL.init(string:))?.port)
    }

    /// Offloads to `bucket` under `content/` at `gate`, URLs living `lifetime`.
    static func offload(
        to bucket: String, at gate: PresignedStoreGate, lifetime: Duration
    ) -> (inout ServerConfiguration) -> Void {
        { configuration in
            configuration.offload = .s3(bucket: bucket, prefix: "content")
            configuration.s3Endpoint = gate.baseURL
            configuration.s3AccessKeyID = ContentPushCommandTests.credentials["AWS_ACCESS_KEY_ID"]
            configuration.s3SecretAccessKey = ContentPushCommandTests.credentials["AWS_SECRET_ACCESS_KEY"]
            configuration.offloadURLLifetime = lifetime
        }
    }

    /// Runs `body` with a Kiosk offloading to a fresh bucket of the emulator behind a ``PresignedStoreGate`` (its
    /// clock `skew` ahead, relaying `bytesPerSecond` a connection), URLs living `lifetime`.
    static func withStore(
        lifetime: Duration = .seconds(600), skew: TimeInterval = 0, bytesPerSecond: Int? = nil,
        _ body: (TestServer, PresignedStoreGate, String) async throws -> Void
    ) async throws {
        let bucket = try await ContentPushCommandTests.freshBucket()
        let gate = try PresignedStoreGate(to: upstreamPort(), skew: skew, bytesPerSecond: bytesPerSecond)
        defer { gate.stop() }
        try await TestServer.with(configure: offload(to: bucket, at: gate, lifetime: lifetime)) { server in
            try await body(server, gate, bucket)
        }
    }

    /// `kiosk content push` of the server's content folder to `bucket` under `content/`, straight to the emulator.
    static func push(_ server: TestServer, to bucket: String) async throws {
        let outcome = try await ChildProcess.runKiosk(
            [
                "content", "push", server.contentDirectory.path, "--endpoint", try #require(endpoint), "--bucket",
                bucket, "--prefix", "content",
            ], environment: ContentPushCommandTests.credentials)
        try #require(outcome.exitStatus == 0, "\(outcome)")
    }

    /// What the store was asked: no request carries Kiosk's token or validator, each carries a signature.
    static func expectPresignedOnly(_ heads: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!heads.isEmpty, sourceLocation: sourceLocation)
        for head in heads {
            let fields = head.lowercased().split(separator: "\r\n").dropFirst()
            #expect(!fields.contains { $0.hasPrefix("authorization:") }, "\(head)", sourceLocation: sourceLocation)
            #expect(!fields.contains { $0.hasPrefix("if-range:") }, "\(head)", sourceLocation: sourceLocation)
            #expect(head.contains("X-Amz-Signature="), "\(head)", sourceLocation: sourceLocation)
        }
    }

    /// The `kiosk get` of the product into `cache`, with the purchase's receipt.
    static func get(_ server: TestServer, cache: URL, receipt: String) async throws -> ChildProcess.Outcome {
        try await ChildProcess.runKiosk(
            [
                "get", product, "--receipt", "-", "--server", server.baseURL.absoluteString, "--cache", cache.path,
                "--connections-per-file", "2",
            ], input: Data(receipt.utf8))
    }

    /// A chunked file and two small ones, through KioskKit: the grant gives every file a presigned URL of its
    /// object and no pack (every byte from the store), its `expires_at` no later than the URLs'; the store gets
    /// ranged GETs with no token and no `If-Range`, and Kiosk sends no file byte.
    @Test(.enabled(if: endpoint != nil, "KIOSK_TEST_S3_ENDPOINT not set: needs moto_server (.ci/moto.sh)"))
    func theFilesComeFromTheStoreWithNoTokenSentThere() async throws {
        try await Self.withStore { server, gate, bucket in
            let files = [
                Self.path: Support.randomData(12 << 20), "Contents/cover.jpg": Data("cover".utf8),
                "Contents/notes/a b+c.txt": Data("notes".utf8),
            ]
            let hashes = try await Support.publish(Self.product, version: "1.0", files: files, on: server)
            try await Self.push(server, to: bucket)
            let purchase = try await server.buy(Self.product)
            let issuedAt = Date()
            let grant = try await server.grant(Self.product, receipt: purchase.receiptData)
            #expect(grant.pack == nil, "every byte comes from the store")
            #expect(grant.files.contains { ($0.chunks?.count ?? 0) > 1 })
            for file in grant.files {
                let url = try #require(file.presignedURL.flatMap(URL.init(string:)))
                #expect(
                    url.absoluteString.hasPrefix(
                        "\(gate.baseURL.absoluteString)/\(bucket)/content/\(Self.product)/1.0/"))
                #expect(file.url.hasPrefix("/v1/content/"), "Kiosk's own URL stays, for older clients")
            }
            #expect(grant.expiresAt <= issuedAt.addingTimeInterval(601))

            let client = try await Support.makeClient(server.baseURL, root: server.makeScratchDirectory())
            _ = try await client.enqueue(productID: Self.product, receipt: purchase.receiptData)
            let content = try await client.waitUntilInstalled(productID: Self.product)
            try Support.expectInstalled(content, hashes: hashes)
            await client.close()
            #expect(try await Support.settledBytesSent(server) == 0, "Kiosk sent no file byte")
            #expect(gate.bytesToClient >= files.values.reduce(0) { $0 + $1.count })
            Self.expectPresignedOnly(gate.requestHeads)
            #expect(gate.requestHeads.count >= 12 + 2, "the big file came in chunk ranges, the small ones alone")
        }
    }

    /// URLs that live 4 s (each grant's with 2 to 4 s left) and a store whose clock runs 1.5 s ahead of Kiosk's, so
    /// that some requests meet an expired URL (403) before the client expects it: `kiosk get` of 24 MiB at 2 × 2 MiB/s
    /// (about 6 s) renews its grant, on time or on the 403, and goes on from the bytes it has.
    @Test(.enabled(if: endpoint != nil, "KIOSK_TEST_S3_ENDPOINT not set: needs moto_server (.ci/moto.sh)"))
    func urlsExpiringMidDownloadAreRenewedAndTheGetGoesOn() async throws {
        try await Self.withStore(lifetime: .seconds(4), skew: 1.5, bytesPerSecond: 2 << 20) { server, gate, bucket in
            let data = Support.randomData(24 << 20)
            let hashes = try await Support.publish(Self.product, version: "1.0", files: [Self.path: data], on: server)
            try await Self.push(server, to: bucket)
            let purchase = try await server.buy(Self.product)
            let cache = server.makeScratchDirectory()
            let outcome = try await Self.get(server, cache: cache, receipt: purchase.receiptData)
            #expect(outcome.exitStatus == 0, "\(outcome)")
            let installed = cache.appendingPathComponent("Content/\(Self.product)/1.0/\(Self.path)")
            #expect(try Support.sha256(of: installed) == hashes[Self.path])
            let heads = gate.requestHeads
            Self.expectPresignedOnly(heads)
            let signingTimes = Set(heads.compactMap { $0.firstMatch(of: /X-Amz-Date=(\d{8}T\d{6}Z)/)?.1 })
            #expect(signingTimes.count >= 2, "URLs of \(signingTimes.count) signing windows were used")
            #expect(gate.refused >= 1, "no request met an expired URL: the 403 path was not taken")
            #expect(
                gate.bytesToClient < data.count + data.count / 4,
                "\(gate.bytesToClient) bytes relayed for \(data.count): resumed, not started over")
            #expect(try await Support.settledBytesSent(server) == 0)
        }
    }

    /// An update through the store, in the scenario of ``UpdateEndToEndTests`` (seeded bytes: 2.0 inserts 1 MiB in
    /// the middle of a 32 MiB file, overwrites 64 KiB near its end, keeps a file, drops one and adds one): `kiosk get`
    /// with the cache of 1.0 fetches the changed chunks' subchunk lists from Kiosk and from the store exactly the
    /// bytes the manifests say it lacks (``UpdateEndToEndTests/updateCost(old:new:_:)``), and installs 2.0 exactly.
    @Test(.enabled(if: endpoint != nil, "KIOSK_TEST_S3_ENDPOINT not set: needs moto_server (.ci/moto.sh)"))
    func anUpdateFetchesOnlyWhatChangedFromTheStore() async throws {
        try await Self.withStore { server, gate, bucket in
            let versions = UpdateEndToEndTests.Versions()
            _ = try await Support.publish(Self.product, version: "1.0", files: versions.old, on: server)
            try await Self.push(server, to: bucket)
            let purchase = try await server.buy(Self.product)
            let old = try await server.grant(Self.product, receipt: purchase.receiptData)
            let cache = server.makeScratchDirectory()
            let first = try await Self.get(server, cache: cache, receipt: purchase.receiptData)
            try #require(first.exitStatus == 0, "\(first)")

            let hashes = try await Support.publish(Self.product, version: "2.0", files: versions.new, on: server)
            try await Self.push(server, to: bucket)
            let new = try await server.grant(Self.product, receipt: purchase.receiptData)
            let before = gate.bodyBytesToClient
            let update = try await Self.get(server, cache: cache, receipt: purchase.receiptData)
            #expect(update.exitStatus == 0, "\(update)")
            for (path, hash) in hashes {
                let installed = cache.appendingPathComponent("Content/\(Self.product)/2.0/\(path)")
                #expect(try Support.sha256(of: installed) == hash, "\(path)")
            }
            let fetched = Int64(gate.bodyBytesToClient - before)
            let cost = UpdateEndToEndTests.updateCost(old: old, new: new, versions)
            #expect(fetched == cost, "the update fetched \(fetched) bytes from the store; it costs \(cost)")
            #expect(cost < new.totalLength / 8)
            #expect(try await Support.settledBytesSent(server) == 0)
            Self.expectPresignedOnly(gate.requestHeads)
        }
    }
}
