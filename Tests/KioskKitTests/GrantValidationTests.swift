import Foundation
import KioskCore
import Testing

@testable import KioskKit

/// #15: what KioskKit accepts from a server's grant — content URLs, caps, trust — and from an app's server URL.
@Suite("Grant validation")
struct GrantValidationTests {
    static let product = "com.example.a"
    static let hash = String(repeating: "0f", count: 32)

    static func file(_ path: String = "Contents/a.bin", url: String? = nil, length: Int64 = 10) -> GrantFile {
        GrantFile(path: path, length: length, sha256: hash, url: url ?? "/v1/content/\(product)/1.0/\(path)")
    }

    static func grant(_ files: [GrantFile], total: Int64? = nil, product: String = product) -> Grant {
        Grant(
            productID: product, contentVersion: "1.0", totalLength: total ?? files.reduce(0) { $0 + $1.length },
            expiresAt: Date(timeIntervalSince1970: 4_070_908_800), token: "t", files: files)
    }

    static func problem(_ grant: Grant, limits: GrantLimits = GrantLimits()) -> GrantProblem? {
        do {
            try GrantValidation.validate(grant, productID: product, limits: limits)
            return nil
        } catch {
            guard case .unsafeGrant(_, let problem) = error else { return nil }
            return problem
        }
    }

    // MARK: - #27 flaw 1: chunking a client can afford

    /// Chunking parameters this client cuts with (a power-of-two average, `minimum < average < maximum`) but cannot
    /// afford: a 2^50 `maximum` made an update allocate 1 PiB and abort, at every launch once journaled; a 64-byte
    /// `minimum` made the update's index about one byte per installed byte.
    static let unaffordable: [ChunkingParameters] = [
        ChunkingParameters(minimum: 256 << 10, average: 1 << 20, maximum: Int.max),
        ChunkingParameters(minimum: 256 << 10, average: 1 << 20, maximum: 1 << 50),
        ChunkingParameters(minimum: 256 << 10, average: 1 << 20, maximum: (16 << 20) + 1),
        ChunkingParameters(minimum: 64, average: 256, maximum: 1024),
        ChunkingParameters(minimum: (16 << 10) - 1, average: 64 << 10, maximum: 256 << 10),
        ChunkingParameters(minimum: 16 << 10, average: 32 << 10, maximum: 256 << 10),
    ]

    static func chunkedGrant(chunking: ChunkingParameters, subchunking: ChunkingParameters) -> Grant {
        var grant = Self.grant([Self.file()])
        grant.chunking = chunking
        grant.subchunks = GrantSubchunks(url: "/v1/subchunks/\(product)/1.0", chunking: subchunking)
        return grant
    }

    @Test(arguments: unaffordable)
    func chunkingOutsideTheBoundsIsRefusedForChunksAndForSubchunks(parameters: ChunkingParameters) {
        #expect(parameters.isSupported, "the parameters must be ones the client would cut with")
        let figures = "(minimum \(parameters.minimum), average \(parameters.average), maximum \(parameters.maximum)"
        let chunks = Self.problem(Self.chunkedGrant(chunking: parameters, subchunking: .subchunks))
        #expect(chunks?.description.hasPrefix("its chunking \(figures) bytes) is outside") == true, "\(chunks as Any)")
        let subchunks = Self.problem(Self.chunkedGrant(chunking: .standard, subchunking: parameters))
        #expect(
            subchunks?.description.hasPrefix("its subchunks.chunking \(figures) bytes) is outside") == true,
            "\(subchunks as Any)")
    }

    @Test func theServersChunkingAndTheBoundsThemselvesAreAccepted() {
        #expect(Self.problem(Self.chunkedGrant(chunking: .standard, subchunking: .subchunks)) == nil)
        let widest = ChunkingParameters(minimum: 16 << 10, average: 64 << 10, maximum: 16 << 20)
        #expect(Self.problem(Self.chunkedGrant(chunking: widest, subchunking: widest)) == nil)
        // Chunking this client does not cut with is ignored, as before: the files are verified whole.
        var other = ChunkingParameters.standard
        other.algorithm = "another-v9"
        other.maximum = Int.max
        #expect(Self.problem(Self.chunkedGrant(chunking: other, subchunking: other)) == nil)
    }

    @Test func aJournaledGrantWithUnaffordableChunkingIsDropped() {
        let grant = Self.chunkedGrant(
            chunking: ChunkingParameters(minimum: 256 << 10, average: 1 << 20, maximum: 1 << 50),
            subchunking: .subchunks)
        let record = DownloadRecord(
            id: DownloadID(), productID: Self.product, receipt: "r", priority: .normal, sequence: 0, state: .active,
            attempt: 0, grant: grant, grantReceivedAt: Date(), entityTags: [:], verifiedPaths: [],
            integrityFailures: [:], createdAt: Date())
        #expect(record.droppingUnsafeGrant(limits: GrantLimits()).grant == nil)
    }

    @Test(arguments: [
        "/v1/content/com.example.a/1.0/Contents/a.bin",
        "/v1/content/com.example.a/1.0/Contents/with%20space%2C(1).bin",
        "/v1/content/com.example.a/1.0/Contents/deeper/b.bin",
    ])
    func contentURLsUnderTheProductAndVersionAreAccepted(url: String) throws {
        let file = Self.file(url: url)
        #expect(try GrantValidation.contentPath(of: file, in: Self.grant([file])) == url)
        let api = APIClient(
            serverURL: URL(string: "https://kiosk.example.com/base/")!, idleTimeout: 60,
            limits: .init(maximumResponseSize: 1 << 20, deadline: 60, grant: GrantLimits()))
        let resolved = try api.contentURL(for: file, in: Self.grant([file]))
        #expect(resolved.absoluteString == "https://kiosk.example.com/base" + url)
    }

    @Test(arguments: [
        "Contents/a.bin",  // no leading slash: trapped KioskKit before #15
        "",
        "/",
        "/v1/content/com.example.a/1.0/",
        "/v1/content/com.example.a/2.0/Contents/a.bin",  // another version
        "/v1/content/com.example.b/1.0/Contents/a.bin",  // another product
        "/v1/content/com.example.a/1.0/../../com.example.b/1.0/a.bin",
        "/v1/content/com.example.a/1.0/Contents/%2e%2e/%2e%2e/x",
        "/v1/content/com.example.a/1.0/Contents%2Fa.bin",  // encoded slash
        "/v1/content/com.example.a/1.0/Contents//a.bin",
        "/v1/content/com.example.a/1.0/Contents/a.bin?token=x",
        "/v1/content/com.example.a/1.0/Contents/a.bin#x",
        "/v1/content/com.example.a/1.0/Contents/a b.bin",
        "/v1/content/com.example.a/1.0/Contents/%zz.bin",
        "/v1/content/com.example.a/1.0/Contents/%ff.bin",  // not UTF-8
        "/v1/content/com.example.a/1.0/Contents/%00.bin",
        "https://evil.example/v1/content/com.example.a/1.0/Contents/a.bin",
        "//evil.example/v1/content/com.example.a/1.0/Contents/a.bin",
        "/v1/content/com.example.a/1.0/Contents/\u{1B}[2J.bin",
    ])
    func otherContentURLsAreATypedError(url: String) {
        let file = Self.file(url: url)
        #expect(Self.problem(Self.grant([file])) == .contentURL(path: file.path, url: GrantProblem.excerpt(url)))
    }

    @Test func longServerTextIsShortenedInTheError() {
        let url = "/x" + String(repeating: "a", count: 10_000)
        guard case .contentURL(_, let kept)? = Self.problem(Self.grant([Self.file(url: url)])) else {
            Issue.record("not a content URL problem")
            return
        }
        #expect(kept.count == 128)
    }

    @Test func fileCountPathLengthAndTotalLengthAreCapped() {
        let files = (0..<5).map { Self.file("Contents/\($0).bin") }
        #expect(Self.problem(Self.grant(files), limits: GrantLimits(maximumFileCount: 5)) == nil)
        #expect(
            Self.problem(Self.grant(files), limits: GrantLimits(maximumFileCount: 4))
                == .tooManyFiles(count: 5, limit: 4))

        let long = "Contents/" + Array(repeating: String(repeating: "d", count: 200), count: 6).joined(separator: "/")
        #expect(Self.problem(Self.grant([Self.file(long)])) == .pathTooLong(bytes: long.utf8.count, limit: 1024))

        let big = Self.file(length: (1 << 40) + 1)
        #expect(Self.problem(Self.grant([big])) == .totalLengthTooLarge((1 << 40) + 1, limit: 1 << 40))
        let halves = [
            Self.file("Contents/a", length: Int64.max / 2 + 1), Self.file("Contents/b", length: Int64.max / 2 + 1),
        ]
        #expect(
            Self.problem(Self.grant(halves, total: 0), limits: GrantLimits(maximumTotalLength: .max))
                == .totalLengthTooLarge(.max, limit: .max))  // no overflow trap
        #expect(Self.problem(Self.grant([Self.file()], total: 11)) == .totalLengthMismatch(declared: 11, sum: 10))
        #expect(Self.problem(Self.grant([Self.file()], total: -1)) == .totalLengthTooLarge(-1, limit: 1 << 40))
    }

    @Test func pathsHashesAndProductsAreChecked() {
        #expect(
            Self.problem(Self.grant([Self.file("../etc/passwd", url: "/v1/content/com.example.a/1.0/x")]))
                == .invalidPath("../etc/passwd"))
        var badHash = Self.file()
        badHash.sha256 = String(repeating: "z", count: 64)
        #expect(Self.problem(Self.grant([badHash])) == .invalidFile(path: "Contents/a.bin"))
        #expect(Self.problem(Self.grant([Self.file(), Self.file()])) == .duplicatePath("Contents/a.bin"))
        #expect(Self.problem(Self.grant([Self.file()], product: "com.example.b")) == .otherProduct("com.example.b"))
    }

    @Test func aGrantIsTrustedForAtMostADayAfterItArrived() {
        let grant = Self.grant([Self.file()])  // expires in 2099
        let received = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(GrantValidation.trustedUntil(grant, receivedAt: received) == received.addingTimeInterval(24 * 3600))
        #expect(GrantValidation.trustedUntil(grant, receivedAt: nil) == .distantPast)
        var soon = grant
        soon.expiresAt = received.addingTimeInterval(60)
        #expect(GrantValidation.trustedUntil(soon, receivedAt: received) == soon.expiresAt)
    }

    @Test func aJournaledGrantThatFailsValidationIsDroppedKeepingTheFilesForRehashing() {
        let bad = Self.grant([Self.file(url: "Contents/a.bin"), Self.file("Contents/b.bin")])
        let record = DownloadRecord(
            id: DownloadID(), productID: Self.product, receipt: "r", priority: .normal, sequence: 0, state: .active,
            attempt: 0, grant: bad, grantReceivedAt: Date(), entityTags: ["Contents/a.bin": "\"e\""],
            verifiedPaths: ["Contents/b.bin"], integrityFailures: [:], createdAt: Date())
        let dropped = record.droppingUnsafeGrant(limits: GrantLimits())
        #expect(dropped.grant == nil)
        #expect(dropped.grantReceivedAt == nil)
        #expect(dropped.verifiedPaths.isEmpty)
        #expect(dropped.entityTags == ["Contents/a.bin": "\"e\""])
        var good = record
        good.grant = Self.grant([Self.file(), Self.file("Contents/b.bin")])
        #expect(good.droppingUnsafeGrant(limits: GrantLimits()) == good)
    }

    @Test(arguments: [
        ("http://127.0.0.1:8080", true), ("http://127.1.2.3", true), ("http://localhost:8080", true),
        ("http://LOCALHOST", true), ("http://[::1]:8080", true), ("http://[::ffff:127.0.0.1]", true),
        ("https://kiosk.example.com", true), ("https://203.0.113.5", true),
        ("http://kiosk.example.com", false), ("http://203.0.113.5:8080", false), ("http://128.0.0.1", false),
        ("http://127.0.0.1.example.com", false), ("http://[::2]", false), ("http://localhost.example.com", false),
    ])
    func plainHTTPOnlyReachesLoopback(url: String, allowed: Bool) {
        let refused: Bool
        do {
            try ServerURLPolicy.check(URL(string: url)!, allowsInsecureHTTP: false)
            refused = false
        } catch {
            refused = error.code == "insecure_http"
        }
        #expect(refused == !allowed)
        #expect(throws: Never.self) { try ServerURLPolicy.check(URL(string: url)!, allowsInsecureHTTP: true) }
    }

    @Test func otherSchemesAreRefused() {
        for url in ["ftp://kiosk.example.com", "file:///tmp/x", "kiosk.example.com"] {
            #expect(throws: KioskError.self) { try ServerURLPolicy.check(URL(string: url)!, allowsInsecureHTTP: true) }
        }
    }

    @Test func theDefaultResponseLimitHoldsTwiceA20000FileGrant() throws {
        let files = (0..<20_000).map { index in
            Self.file(String(format: "Contents/levels/level-%05d/assets/texture-%05d.png", index / 100, index))
        }
        let size = try KioskJSON.encode(Self.grant(files)).count
        #expect(2 * size <= KioskClient.Configuration().maximumResponseSize, "a 20,000-file grant is \(size) bytes")
        #expect(20_000 <= GrantLimits().maximumFileCount)
    }
}
