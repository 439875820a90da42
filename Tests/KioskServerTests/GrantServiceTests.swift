import Foundation
import KioskCore
import KioskStore
import Logging
import Testing

@testable import KioskServer

/// The grant service over the sandbox store's receipts, a ledger on a fresh database and the test clock: no HTTP.
struct GrantServiceHarness {
    let sandbox: SandboxTestHarness
    let service: GrantService
    let ledger: SQLLedger
    let installations: InstallationService

    static let installation = "install-1"
    static let logger = Logger(label: "test")

    static func with(
        _ engine: KioskDatabase.Engine, maxInstallations: Int = 5,
        removalLimit: RemovalLimit = RemovalLimit(removals: 3, window: .seconds(30 * 86_400)),
        _ body: (GrantServiceHarness) async throws -> Void
    ) async throws {
        try await SandboxTestHarness.with(engine) { sandbox in
            let ledger = SQLLedger(database: sandbox.database)
            let now = sandbox.clock.closure
            let receipts = ReceiptVerifier(
                transport: SandboxStoreTransport(store: sandbox.store),
                productionURL: SandboxStoreTransport.productionURL,
                sandboxURL: SandboxStoreTransport.sandboxURL, now: now, sleep: { _ in })
            let signedData = SignedDataVerifier(
                trustedRoots: [], bundleID: SandboxTestHarness.bundleID, environments: ["Sandbox"])
            let purchases = PurchaseCheck(
                catalog: sandbox.catalog,
                proofs: ProofVerifier(
                    receipts: receipts, signedData: signedData, ledger: ledger, revocations: RevocationList(), now: now),
                policy: EntitlementPolicy(bundleID: SandboxTestHarness.bundleID), now: now)
            let metrics = ServerMetrics()
            let installations = InstallationService(
                purchases: purchases, ledger: ledger, metrics: metrics, maxInstallations: maxInstallations,
                removalLimit: removalLimit, now: now)
            let service = GrantService(
                purchases: purchases, installations: installations, signer: GrantTestFixtures.signer,
                metrics: metrics, grantLifetime: .seconds(600), now: now)
            try await body(
                GrantServiceHarness(sandbox: sandbox, service: service, ledger: ledger, installations: installations))
        }
    }

    func grant(
        _ productID: String, receipt: String, installation: String? = GrantServiceHarness.installation
    ) async throws -> Grant {
        try KioskJSON.decode(
            Grant.self, from: try await grantJSON(productID, receipt: receipt, installation: installation))
    }

    /// The grant's JSON, as the server sends it.
    func grantJSON(
        _ productID: String, receipt: String, installation: String? = GrantServiceHarness.installation
    ) async throws -> Data {
        let issued = try await service.grant(
            GrantRequest(proof: .receipt(receipt), productID: productID, installationID: installation),
            logger: Self.logger)
        return Data(issued.json.flatMap { $0.readableBytesView })
    }
}

@Suite("Grant service")
struct GrantServiceTests {
    typealias H = GrantServiceHarness
    typealias S = SandboxTestHarness

    /// The refusal `body` throws, as the API would render it.
    private func refusal(_ body: () async throws -> some Any) async -> (any APIResponseError)? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error as? any APIResponseError
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aBoughtProductGetsASignedGrantForItsCurrentVersion(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let bought = try await h.sandbox.buy(S.issue)
            let grant = try await h.grant(S.issue, receipt: bought.receiptData)
            #expect(grant.productID == S.issue)
            #expect(grant.contentVersion == "1.0")
            #expect(grant.expiresAt == h.sandbox.clock.now.addingTimeInterval(600))
            #expect(grant.files.map(\.url) == ["/v1/content/\(S.issue)/1.0/Contents/issue.pdf"])
            let claims = try GrantTestFixtures.signer.verify(grant.token, now: h.sandbox.clock.now).get()
            #expect(claims.transactionID == bought.transactionID)
            #expect(claims.originalTransactionID == bought.originalTransactionID)
            #expect(try await h.ledger.transaction(id: bought.transactionID) != nil)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aGrantOfChunkedFilesSaysWhereTheirChunksAreCutFiner(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let receipt = try await h.sandbox.buy(S.issue).receiptData
            // A file of one chunk: no chunks, no subchunks.
            let plain = try await h.grantJSON(S.issue, receipt: receipt)
            #expect(!String(decoding: plain, as: UTF8.self).contains("subchunks"))
            #expect(try KioskJSON.decode(Grant.self, from: plain).subchunks == nil)
            try h.sandbox.content.write("\(S.issue)/Contents/big.bin", FileChunkingTests.randomBytes(3 << 20, seed: 3))
            _ = await h.sandbox.catalog.reload()
            let json = try await h.grantJSON(S.issue, receipt: receipt)
            #expect(
                String(decoding: json, as: UTF8.self).contains(
                    #""subchunks":{"chunking":{"algorithm":"fastcdc-gear64-nc2-v1","average":65536,"maximum":262144,"#
                        + #""minimum":16384},"url":"/v1/subchunks/com.example.issue/1.0"}"#))
            let grant = try KioskJSON.decode(Grant.self, from: json)
            #expect(grant.chunking == .standard)
            #expect(grant.subchunks == GrantSubchunks(url: "/v1/subchunks/\(S.issue)/1.0", chunking: .subchunks))
        }
    }

    @Test(arguments: TestDatabase.engines)
    func badRequestsAreRefusedBeforeTheStoreIsAsked(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let receipt = try await h.sandbox.buy(S.issue).receiptData
            let invalid = await refusal { try await h.grant("not a product", receipt: receipt) }
            #expect(invalid as? GrantRefusal == .invalidProductID("not a product"))
            let anonymous = await refusal { try await h.grant(S.issue, receipt: receipt, installation: nil) }
            #expect(anonymous as? GrantRefusal == .installationIDMissing)
            #expect(anonymous?.status == .badRequest)
            let badInstallation = await refusal { try await h.grant(S.issue, receipt: receipt, installation: "a b") }
            #expect(badInstallation as? GrantRefusal == .invalidInstallationID)
            let unknown = await refusal { try await h.grant("com.example.nothing", receipt: receipt) }
            #expect(unknown as? GrantRefusal == .unknownProduct("com.example.nothing"))
            #expect(unknown?.errorCode == .notFound)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aProductTheReceiptDoesNotHoldIsNotEntitled(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let receipt = try await h.sandbox.buy(S.coins).receiptData
            let refused = await refusal { try await h.grant(S.issue, receipt: receipt) }
            #expect(refused as? GrantRefusal == .notEntitled(.notPurchased(productID: S.issue)))
            #expect(refused?.errorCode == .notEntitled)
            #expect(refused?.status.code == 403)
            #expect(refused?.message == EntitlementRefusal.notPurchased(productID: S.issue).message)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aProofTheStoreRefusesThrowsTheStoresRefusal(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let refused = await refusal { try await h.grant(S.issue, receipt: "bm90IGEgcmVjZWlwdA==") }
            #expect(refused is ReceiptVerificationError)
            #expect(refused?.errorCode == .receiptMalformed)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func theInstallationCapHolds(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine, maxInstallations: 1) { h in
            let receipt = try await h.sandbox.buy(S.issue).receiptData
            _ = try await h.grant(S.issue, receipt: receipt, installation: "first")
            _ = try await h.grant(S.issue, receipt: receipt, installation: "first")
            let refused = await refusal { try await h.grant(S.issue, receipt: receipt, installation: "second") }
            #expect(
                refused as? GrantRefusal
                    == .installationLimit(installations: 1, removals: RemovalAllowance(left: 3, resetsAt: nil)))
            #expect(refused?.errorCode == .installationLimit)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aSubscriptionStopsGrantingWhenTheClockPassesItsEnd(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let receipt = try await h.sandbox.buy(S.monthly).receiptData
            _ = try await h.grant(S.monthly, receipt: receipt)
            h.sandbox.clock.advance(by: 32 * 86_400)
            let refused = await refusal { try await h.grant(S.monthly, receipt: receipt) }
            guard case .notEntitled(.expired)? = refused as? GrantRefusal else {
                Issue.record("expected an expiry refusal, got \(String(describing: refused))")
                return
            }
        }
    }

    @Test(arguments: TestDatabase.engines)
    func restoreListsWhatTheProofEntitlesToNow(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            _ = try await h.sandbox.buy(S.coins)
            let receipt = try await h.sandbox.buy(S.issue).receiptData
            let answer = try await h.service.entitlements(for: .receipt(receipt), logger: H.logger)
            #expect(answer.environment == "Sandbox")
            #expect(Set(answer.entitlements.map(\.productID)) == [S.coins, S.issue])
        }
    }
}
