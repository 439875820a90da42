import Foundation
import KioskCore
import KioskStore
import Logging
import Testing

@testable import KioskServer

/// Listing and removing the installations of a purchase: the ledger's records, the removal limit in its rolling
/// window (moved with the test clock, never slept), and the refusals, through ``InstallationService`` with no HTTP.
@Suite("Installation service")
struct InstallationServiceTests {
    typealias H = GrantServiceHarness
    typealias S = SandboxTestHarness

    /// Two removals in any 10 days.
    static let limit = RemovalLimit(removals: 2, window: .seconds(10 * 86_400))

    private func list(_ h: H, receipt: String) async throws -> InstallationList {
        try await h.installations.installations(
            InstallationsRequest(proof: .receipt(receipt), productID: S.issue), logger: H.logger)
    }

    private func remove(_ h: H, _ installation: String, receipt: String) async throws -> InstallationList {
        try await h.installations.remove(
            InstallationRemovalRequest(proof: .receipt(receipt), productID: S.issue, installationID: installation),
            logger: H.logger)
    }

    /// The refusal `body` throws.
    private func refusal(_ body: () async throws -> some Any) async -> (any APIResponseError)? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error as? any APIResponseError
        }
    }

    @Test(arguments: TestDatabase.engines)
    func theListShowsEachInstallationOnceWithWhenItWasFirstAndLastSeen(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine, maxInstallations: 3, removalLimit: Self.limit) { h in
            let receipt = try await h.sandbox.buy(S.issue).receiptData
            let start = h.sandbox.clock.now
            _ = try await h.grant(S.issue, receipt: receipt, installation: "phone")
            h.sandbox.clock.advance(by: 60)
            _ = try await h.grant(S.issue, receipt: receipt, installation: "tablet")
            h.sandbox.clock.advance(by: 60)
            // Known again: seen later, never counted twice.
            for _ in 0..<3 { _ = try await h.grant(S.issue, receipt: receipt, installation: "phone") }
            let listed = try await list(h, receipt: receipt)
            #expect(
                listed.installations == [
                    Installation(installationID: "phone", firstSeen: start, lastSeen: start.addingTimeInterval(120)),
                    Installation(
                        installationID: "tablet", firstSeen: start.addingTimeInterval(60),
                        lastSeen: start.addingTimeInterval(60)),
                ])
            #expect(listed.limit == 3 && listed.removalsLeft == 2 && listed.removalsResetAt == nil)
            // The third place is still free.
            _ = try await h.grant(S.issue, receipt: receipt, installation: "laptop")
            #expect(try await list(h, receipt: receipt).installations.count == 3)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aRemovedInstallationFreesItsPlaceAndTheRefusalSaysHow(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine, maxInstallations: 1, removalLimit: Self.limit) { h in
            let receipt = try await h.sandbox.buy(S.issue).receiptData
            _ = try await h.grant(S.issue, receipt: receipt, installation: "old-phone")
            let refused = await refusal { try await h.grant(S.issue, receipt: receipt, installation: "new-phone") }
            #expect(refused?.errorCode == .installationLimit)
            #expect(refused?.message.contains("used on 1 installations") == true)
            #expect(refused?.message.contains("POST /v1/installations/remove") == true)
            #expect(refused?.message.contains("KioskClient.removeInstallation(_:productID:proof:)") == true)
            #expect(refused?.message.contains("2 removals are left.") == true)

            let after = try await remove(h, "old-phone", receipt: receipt)
            #expect(after.installations.isEmpty)
            #expect(after.removalsLeft == 1)
            #expect(after.removalsResetAt == h.sandbox.clock.now.addingTimeInterval(10 * 86_400))
            _ = try await h.grant(S.issue, receipt: receipt, installation: "new-phone")
            #expect(try await list(h, receipt: receipt).installations.map(\.installationID) == ["new-phone"])
        }
    }

    @Test(arguments: TestDatabase.engines)
    func removalsStopAtTheLimitAndComeBackAsTheWindowRolls(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine, maxInstallations: 5, removalLimit: Self.limit) { h in
            let receipt = try await h.sandbox.buy(S.issue).receiptData
            for device in ["a", "b", "c", "d"] {
                _ = try await h.grant(S.issue, receipt: receipt, installation: device)
            }
            let first = h.sandbox.clock.now
            _ = try await remove(h, "a", receipt: receipt)
            h.sandbox.clock.advance(by: 86_400)
            let last = try await remove(h, "b", receipt: receipt)
            #expect(last.removalsLeft == 0 && last.removalsResetAt == first.addingTimeInterval(10 * 86_400))

            let refused = await refusal { try await remove(h, "c", receipt: receipt) }
            #expect(
                refused as? InstallationRefusal
                    == .removalLimit(
                        limit: Self.limit, nextRemovalAt: first.addingTimeInterval(10 * 86_400),
                        secondsLeft: 9 * 86_400))
            #expect(refused?.status.code == 403 && refused?.errorCode == .removalLimit)
            #expect(refused?.headers["Retry-After"] == "777600")
            #expect(refused?.message.contains(RFC3339.string(from: first.addingTimeInterval(10 * 86_400))) == true)
            #expect(try await list(h, receipt: receipt).installations.count == 2, "a refused removal removed")
            // The grant refusal at the cap says so too.
            for device in ["e", "f", "g"] { _ = try? await h.grant(S.issue, receipt: receipt, installation: device) }
            let capped = await refusal { try await h.grant(S.issue, receipt: receipt, installation: "h") }
            #expect(capped?.message.contains("No removal is left until") == true)

            // One second before the first removal leaves the window: still refused; at it, one removal is back.
            h.sandbox.clock.set(first.addingTimeInterval(10 * 86_400 - 1))
            #expect(await refusal { try await remove(h, "c", receipt: receipt) }?.errorCode == .removalLimit)
            h.sandbox.clock.set(first.addingTimeInterval(10 * 86_400))
            let back = try await remove(h, "c", receipt: receipt)
            #expect(back.removalsLeft == 0)
            #expect(back.removalsResetAt == first.addingTimeInterval(11 * 86_400))
        }
    }

    @Test(arguments: TestDatabase.engines)
    func unknownInstallationsAndBadRequestsAreRefusedLikeGrants(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine, removalLimit: Self.limit) { h in
            let receipt = try await h.sandbox.buy(S.issue).receiptData
            _ = try await h.grant(S.issue, receipt: receipt, installation: "phone")
            let unknown = await refusal { try await remove(h, "somebody-else", receipt: receipt) }
            #expect(unknown as? InstallationRefusal == .unknownInstallation)
            #expect(unknown?.status.code == 404)
            #expect(try await list(h, receipt: receipt).removalsLeft == 2, "a failed removal counted")
            let badID = await refusal { try await remove(h, "a b", receipt: receipt) }
            #expect(badID as? GrantRefusal == .invalidInstallationID)
            let noProduct = await refusal {
                try await h.installations.installations(
                    InstallationsRequest(proof: .receipt(receipt), productID: "com.example.nothing"), logger: H.logger)
            }
            #expect(noProduct as? GrantRefusal == .unknownProduct("com.example.nothing"))
            let notBought = await refusal {
                try await h.installations.installations(
                    InstallationsRequest(proof: .receipt(receipt), productID: S.coins), logger: H.logger)
            }
            #expect(notBought?.errorCode == .notEntitled)
            let tampered = await refusal {
                try await h.installations.installations(
                    InstallationsRequest(proof: .receipt("AAAA" + receipt.dropFirst(4)), productID: S.issue),
                    logger: H.logger)
            }
            #expect(tampered != nil && tampered?.errorCode != .installationLimit)
        }
    }

    @Test func aLedgerOfAnOlderReleaseGainsLastSeen() async throws {
        try await TestDatabase.withURL(.sqlite) { url in
            // The table as the first release made it, with one installation.
            try await TestDatabase.prepareOldRelease(
                at: url,
                statements: [
                    """
                    CREATE TABLE ledger_installations (
                        original_transaction_id TEXT NOT NULL,
                        installation_id TEXT NOT NULL,
                        first_seen_ms BIGINT NOT NULL,
                        PRIMARY KEY (original_transaction_id, installation_id))
                    """,
                    "INSERT INTO ledger_installations VALUES ('p', 'old', 1000000)",
                ])
            let later = Date(timeIntervalSince1970: 5000)
            let old = Date(timeIntervalSince1970: 1000)
            try await TestDatabase.withOpened(url) { database in
                let ledger = SQLLedger(database: database)
                #expect(
                    try await ledger.installations(originalTransactionID: "p")
                        == [InstallationRecord(installationID: "old", firstSeen: old, lastSeen: old)])
                let again = try await ledger.admitInstallation("old", originalTransactionID: "p", limit: 1, at: later)
                #expect(again == .known)
                let new = try await ledger.admitInstallation("new", originalTransactionID: "p", limit: 1, at: later)
                #expect(new == .refused(count: 1))
                #expect(
                    try await ledger.installations(originalTransactionID: "p")
                        == [InstallationRecord(installationID: "old", firstSeen: old, lastSeen: later)])
            }
            // Opening it again changes nothing.
            try await TestDatabase.withOpened(url) { (database) async throws in
                let reopened = SQLLedger(database: database)
                #expect(try await reopened.installations(originalTransactionID: "p").first?.lastSeen == later)
                let limit = RemovalLimit(removals: 1, window: .seconds(100))
                #expect(
                    try await reopened.removeInstallation("old", originalTransactionID: "p", limit: limit, at: later)
                        == .removed(RemovalAllowance(left: 0, resetsAt: later.addingTimeInterval(100))))
                #expect(
                    try await reopened.removeInstallation("old", originalTransactionID: "p", limit: limit, at: later)
                        == .notFound)
            }
        }
    }
}
