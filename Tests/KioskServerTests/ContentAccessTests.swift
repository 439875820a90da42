import Foundation
import KioskCore
import KioskServerTestSupport
import Testing

@testable import KioskServer

@Suite("Content access")
struct ContentAccessTests {
    static let product = "com.example.issue"
    static let transaction = "2000000000000001"

    /// A catalog of one product with one file, a clock, a revocation list and the service over them.
    struct Harness {
        let content: ServerTestDirectory
        let data: ServerTestDirectory
        let clock: ServerTestClock
        let revocations: RevocationList
        let catalog: ContentCatalog
        let access: ContentAccess

        init() async throws {
            content = try ServerTestDirectory("access-content")
            data = try ServerTestDirectory("access-data")
            try content.writeProduct(id: ContentAccessTests.product, files: ["Contents/a.pdf": Data("pdf".utf8)])
            catalog = await ContentCatalog(
                contentDirectory: content.url, dataDirectory: data.url, logger: LogRecorder().logger)
            clock = ServerTestClock(ServerTestFixtures.november2026)
            revocations = RevocationList()
            access = ContentAccess(
                catalog: catalog, tokens: VerifiedTokenCache(signer: GrantTestFixtures.signer),
                revocations: revocations, metrics: ServerMetrics(), now: clock.closure)
        }

        /// A token for `version` of the product, live for a minute from now.
        func token(version: String = "1.0") -> String {
            GrantTestFixtures.signer.sign(
                GrantClaims(
                    productID: ContentAccessTests.product, contentVersion: version,
                    transactionID: ContentAccessTests.transaction,
                    expiresAt: Int64(clock.now.timeIntervalSince1970) + 60, originalTransactionID: "orig"))
        }

        func path(_ file: String = "Contents/a.pdf", version: String = "1.0") -> ContentPath {
            ContentPath(productID: ContentAccessTests.product, version: version, filePath: file)
        }
    }

    private func refusal(_ body: () async throws(ContentRefusal) -> some Any) async -> ContentRefusal? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error
        }
    }

    @Test func aLiveTokenOpensTheFileItsGrantListed() async throws {
        let h = try await Harness()
        let claims = try h.access.claims(for: h.token())
        #expect(claims.transactionID == Self.transaction)
        let file = try await h.access.file(at: h.path(), for: claims)
        #expect(file.file.path == "Contents/a.pdf")
        #expect(file.file.length == 3)
    }

    @Test func noTokenAsksForOneWithWWWAuthenticate() async throws {
        let h = try await Harness()
        for missing in [nil, ""] as [String?] {
            let refused = await refusal { () throws(ContentRefusal) in try h.access.claims(for: missing) }
            #expect(refused == .tokenMissing)
            #expect(refused?.status == .unauthorized)
            #expect(refused?.headers == ["WWW-Authenticate": "Bearer"])
        }
    }

    @Test func aTokenStopsOpeningWhenTheClockPassesItsExpiry() async throws {
        let h = try await Harness()
        let token = h.token()
        _ = try h.access.claims(for: token)
        h.clock.advance(by: 60)
        let refused = await refusal { () throws(ContentRefusal) in try h.access.claims(for: token) }
        #expect(refused == .token(.expired))
        #expect(refused?.errorCode == .tokenExpired)
        #expect(await refusal { () throws(ContentRefusal) in try h.access.claims(for: "v1.x.y.z") } == .token(.invalid))
    }

    @Test func aRevokedPurchaseClosesItsTokens() async throws {
        let h = try await Harness()
        h.revocations.apply([
            .revoked(Revocation(transactionID: Self.transaction, originalTransactionID: "orig", scope: .purchase))
        ])
        let refused = await refusal { () throws(ContentRefusal) in try h.access.claims(for: h.token()) }
        #expect(refused == .revoked)
        #expect(refused?.errorCode == .transactionRevoked)
    }

    @Test func theTokenOpensOnlyItsProductVersionAndTheCatalogsFiles() async throws {
        let h = try await Harness()
        let claims = try h.access.claims(for: h.token())
        let other = ContentPath(productID: "com.example.other", version: "1.0", filePath: "Contents/a.pdf")
        #expect(
            await refusal { () async throws(ContentRefusal) in try await h.access.file(at: other, for: claims) }
                == .token(.outOfScope))
        #expect(
            await refusal { () async throws(ContentRefusal) in
                try await h.access.file(at: h.path("Contents/b.pdf"), for: claims)
            } == .unknownFile(productID: Self.product, path: "Contents/b.pdf"))
        let old = try h.access.claims(for: h.token(version: "0.9"))
        let gone = await refusal { () async throws(ContentRefusal) in
            try await h.access.file(at: h.path(version: "0.9"), for: old)
        }
        #expect(gone == .versionGone(productID: Self.product, version: "0.9"))
        #expect(gone?.status.code == 410)
    }

    @Test func aFileChangedOnDiskIsServedFromTheReloadedCatalog() async throws {
        let h = try await Harness()
        let claims = try h.access.claims(for: h.token())
        try h.content.write("\(Self.product)/Contents/a.pdf", "a longer pdf")
        let file = try await h.access.file(at: h.path(), for: claims)
        #expect(file.file.length == 12)
    }

    @Test func aFileBeingWrittenAsksTheClientToRetry() {
        let refusal = ContentRefusal.fileChanging(productID: Self.product, path: "Contents/a.pdf")
        #expect(refusal.status.code == 500)
        #expect(refusal.errorReason == "file_changing")
        #expect(refusal.headers == ["Retry-After": "1"])
        #expect(refusal.message.contains("Contents/a.pdf"))
    }

    @Test func aFileServedBeforeIsNotOpenedAgain() async throws {
        let h = try await Harness()
        let claims = try h.access.claims(for: h.token())
        let first = try await h.access.file(at: h.path(), for: claims)
        let second = try await h.access.file(at: h.path(), for: claims)
        #expect(first === second)
        #expect(h.catalog.openFiles.count == 1)
        #expect(first.representationDigest == first.file.representationDigest)
        #expect(first.contentType == "application/pdf")
    }

    @Test func aReplacedFileGetsANewDescriptorAndTheOldOneLeavesTheCache() async throws {
        let h = try await Harness()
        let claims = try h.access.claims(for: h.token())
        let before = try await h.access.file(at: h.path(), for: claims)
        // A new file renamed over the old one: another inode, the same size.
        try h.content.write("\(Self.product)/Contents/new.tmp", "PDF")
        #expect(
            rename(
                h.content.url.appendingPathComponent("\(Self.product)/Contents/new.tmp").path,
                h.content.url.appendingPathComponent("\(Self.product)/Contents/a.pdf").path) == 0)
        let after = try await h.access.file(at: h.path(), for: claims)
        #expect(after !== before)
        #expect(after.file.identity.inode != before.file.identity.inode)
        #expect(after.file.sha256 != before.file.sha256)
        #expect(h.catalog.openFiles.count == 1)
        // The response still streaming the old version reads the old bytes from its descriptor.
        let old = try before.duplicateHandle()
        defer { try? old.close() }
        var buffer = [UInt8](repeating: 0, count: 3)
        let read = try old.withUnsafeFileDescriptor { pread($0, &buffer, 3, 0) }
        #expect(read == 3 && buffer == Array("pdf".utf8))
    }

    @Test func aReloadDropsTheDescriptorsOfFilesNoLongerServed() async throws {
        let h = try await Harness()
        let claims = try h.access.claims(for: h.token())
        _ = try await h.access.file(at: h.path(), for: claims)
        #expect(h.catalog.openFiles.count == 1)
        try FileManager.default.removeItem(at: h.content.url.appendingPathComponent(Self.product))
        await h.catalog.reload()
        #expect(h.catalog.openFiles.count == 0)
    }

    @Test func theCacheKeepsAtMostItsCapacity() async throws {
        let content = try ServerTestDirectory("open-files")
        let names = (0..<5).map { "Contents/\($0).bin" }
        try content.writeProduct(
            id: Self.product, files: Dictionary(uniqueKeysWithValues: names.map { ($0, Data($0.utf8)) }))
        let catalog = await ContentCatalog(
            contentDirectory: content.url, dataDirectory: nil, logger: LogRecorder().logger)
        let cache = OpenFileCache(capacity: 2)
        let files = try #require(catalog.snapshot.products[Self.product]?.files)
        var opened: [OpenContentFile] = []
        for file in files { opened.append(try #require(await cache.open(file, of: Self.product, at: file.absolutePath))) }
        #expect(cache.count == 2)
        // The two newest are the ones kept.
        #expect(await cache.open(files[4], of: Self.product, at: files[4].absolutePath) === opened[4])
        #expect(await cache.open(files[3], of: Self.product, at: files[3].absolutePath) === opened[3])
        #expect(await cache.open(files[0], of: Self.product, at: files[0].absolutePath) !== opened[0])
    }
}
