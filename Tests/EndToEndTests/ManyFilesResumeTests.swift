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

/// A product of 5,000 small files against the real server (#16): `kill -9` of `kiosk get` at random points, then a
/// resume; and corrupted files fetched again alone. KioskKit fetches such files in runs from the product's pack; the
/// server's own log counts the requests per file (``ContentRequestLog``: a pack request counts for every file its
/// range covers); the complete download is `ManyFilesTests.fiveThousandSmallFilesDownloadCompletelyAndVerified`.
@Suite("Many-file products: kills, resumes, corrupted files", .serialized, .timeLimit(.minutes(5)))
struct ManyFilesResumeTests {
    typealias Support = KioskKitTestSupport

    static let product = ManyFilesTests.product
    static let fileCount = 5_000
    static let version = "1.0"
    /// The seed of the kill points and of the corrupted files: printed, and set with `KIOSK_KILL_SEED` to repeat a run.
    static let seed = ProcessInfo.processInfo.environment["KIOSK_KILL_SEED"].flatMap(UInt64.init) ?? 20_261_124

    /// The URL path the server logs for a file of the product.
    static func urlPath(_ path: String) -> String { "/v1/content/\(product)/\(version)/\(path)" }

    /// The product's pack, for the request log: its files in grant order (path order), 512 bytes each.
    static let pack = ContentRequestLog.Pack(
        path: "/v1/packs/\(product)/\(version)",
        files: ManyFilesTests.paths(count: fileCount).sorted().map { (urlPath($0), 512) })

    @Test func killedTenTimesThenResumedLosesNoVerifiedFileAndFetchesNoneTwice() async throws {
        print("kill points: seed \(Self.seed) (KIOSK_KILL_SEED=\(Self.seed) repeats them)")
        var random = SplitMix64(seed: Self.seed)
        let requests = ContentRequestLog(pack: Self.pack)
        // Paced, so that a kill lands in the middle of the runs of files in flight.
        try await TestServer.with(
            logger: requests.logger, configure: { $0.faults = .spec(try! FaultSpec(parsing: "throttle=64KiB/s")) }
        ) { server in
            let hashes = try await ManyFilesTests().publish(server, count: Self.fileCount, size: 512)
            let purchase = try await server.buy(Self.product)
            let cache = server.makeScratchDirectory()
            let layout = CacheLayout(root: cache)
            // Two connections: each pack run in flight loses at most its last block (64 KiB) at a kill.
            let command = [
                "get", Self.product, "--receipt", "-", "--server", server.baseURL.absoluteString, "--cache", cache.path,
                "--connections", "2",
            ]
            let input = Data(purchase.receiptData.utf8)

            // After each kill: the files the journal calls verified, and the requests for each file until then.
            var checkpoints: [(verified: Set<String>, counts: [String: Int])] = []
            for kill in 1...10 {
                // Killed once the server has sent the bytes of 200 to 450 more files (the 5 ms polling adds a few):
                // at most 4,500 in all, and a kill loses little more than the pieces in flight, so the tenth kill
                // still lands before the end.
                let bytesBefore = server.contentBytesSent
                let point = Int.random(in: 200...450, using: &random)
                let outcome = try await ChildProcess.runKiosk(
                    command, input: input, killWhen: { server.contentBytesSent >= bytesBefore + Int64(point * 512) })
                try #require(outcome.signal == SIGKILL, "kill \(kill) at +\(point) files: \(outcome)")
                // (A kill within the journal's first group commit leaves no download journaled: nothing verified.)
                let verified = Journal(layout: layout).load().0.downloads.first?.verifiedPaths ?? []
                // No verified file missing or wrong: each is in staging with the granted bytes.
                for path in verified {
                    let staged = layout.stagedFile(productID: Self.product, path: path)
                    #expect(try Support.sha256(of: staged) == hashes[path], "kill \(kill): \(path)")
                }
                print("kill \(kill): at +\(point) files (\(requests.total) requests), \(verified.count) files verified")
                checkpoints.append((verified, requests.counts))
            }
            #expect(checkpoints.last!.verified.count < Self.fileCount)

            let resumed = try await ChildProcess.runKiosk(command, input: input)
            #expect(resumed.exitStatus == 0, "\(resumed)")
            let installed = layout.content(productID: Self.product, version: Self.version)
            let found = FileManager.default.enumerator(at: installed, includingPropertiesForKeys: [.isRegularFileKey])?
                .filter { (try? ($0 as? URL)?.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
            #expect(found?.count == Self.fileCount)
            for (path, hash) in hashes {
                #expect(try Support.sha256(of: installed.appendingPathComponent(path)) == hash, "\(path)")
            }
            // No file fetched again once the journal had it verified.
            let counts = requests.counts
            for (kill, checkpoint) in checkpoints.enumerated() {
                let refetched = checkpoint.verified.filter {
                    counts[Self.urlPath($0)] != checkpoint.counts[Self.urlPath($0)]
                }
                #expect(
                    refetched.isEmpty, "verified by kill \(kill + 1), fetched again: \(refetched.sorted().prefix(5))")
            }
            #expect(Set(counts.keys) == Set(hashes.keys.map(Self.urlPath)))
            let again = counts.values.filter { $0 > 1 }.count
            print("requests: \(requests.total) for \(Self.fileCount) files; \(again) files asked for more than once")
        }
    }

    @Test func aCorruptedFileIsFetchedAgainAlone() async throws {
        // One byte of every answer corrupted (about ten pack runs), each file once only: a server-wide `corrupt` hits
        // a purchase's file once, whether in a pack or on its own, so the files fetched again come intact.
        print("corrupted files: seed \(Self.seed) (KIOSK_KILL_SEED=\(Self.seed) repeats them)")
        let requests = ContentRequestLog(pack: Self.pack)
        try await TestServer.with(
            logger: requests.logger,
            configure: {
                $0.faults = .spec(try! FaultSpec(parsing: "corrupt=random"))
                $0.faultsSeed = Self.seed
            }
        ) { server in
            let hashes = try await ManyFilesTests().publish(server, count: Self.fileCount, size: 512)
            let purchase = try await server.buy(Self.product)
            var configuration = KioskClient.Configuration()
            configuration.retryPolicy = KioskKitTestSupport.quickRetries
            let client = try await KioskClient(
                serverURL: server.baseURL, cacheRoot: server.makeScratchDirectory(), configuration: configuration)
            try await client.enqueue(productID: Self.product, receipt: purchase.receiptData)
            let content = try await client.waitUntilInstalled(productID: Self.product)
            try Support.expectInstalled(content, hashes: hashes)
            await client.close()

            let corrupted = requests.corruptedPaths
            try #require(!corrupted.isEmpty, "no file was corrupted")
            #expect(Set(corrupted).count == corrupted.count, "a file corrupted twice: \(corrupted.sorted())")
            let counts = requests.counts
            #expect(counts.count == Self.fileCount)
            // The corrupted files twice (the damaged answer, then the good one), every other file once.
            #expect(Set(counts.filter { $0.value == 2 }.keys) == Set(corrupted))
            #expect(counts.values.allSatisfy { $0 <= 2 }, "\(counts.filter { $0.value > 2 })")
            print("corrupted and fetched again: \(corrupted.count) of \(Self.fileCount) files")
        }
    }
}
