import Foundation
import KioskCore
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
        let access: ContentAccess

        init() async throws {
            content = try ServerTestDirectory("access-content")
            data = try ServerTestDirectory("access-data")
            try content.writeProduct(id: ContentAccessTests.product, files: ["Contents/a.pdf": Data("pdf".utf8)])
            let catalog = await ContentCatalog(
                contentDirectory: content.url, dataDirectory: data.url, logger: ServerTestLogRecorder().logger)
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
        #expect(file.path == "Contents/a.pdf")
        #expect(file.length == 3)
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
        #expect(file.length == 12)
    }
}
