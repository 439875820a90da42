import Foundation
import Testing

@testable import KioskServer

/// The ledger's customer histories (restore from the App Store Server API's history): kept with their revision,
/// found through any member, merged when two turn out to be one customer's.
@Suite("Customer histories in the ledger")
struct CustomerHistoryLedgerTests {
    static let date = Date(timeIntervalSince1970: 1_800_000_000)

    @Test(arguments: TestDatabase.engines)
    func aHistoryIsFoundThroughAnyMemberWithItsLatestRevision(engine: KioskDatabase.Engine) async throws {
        try await LedgerTestFixtures.withLedger(engine) { ledger, _ in
            #expect(try await ledger.history(containing: "1") == nil)
            var history = CustomerHistory(
                historyID: "h1", environment: "Sandbox", revision: "r1", originalTransactionIDs: ["1", "2"])
            try await ledger.saveHistory(history, at: Self.date)
            #expect(try await ledger.history(containing: "2") == history)
            history.revision = "r2"
            history.originalTransactionIDs = ["1", "2", "3"]
            try await ledger.saveHistory(history, at: Self.date)
            #expect(try await ledger.history(containing: "3") == history)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func twoHistoriesSharingAPurchaseBecomeOne(engine: KioskDatabase.Engine) async throws {
        try await LedgerTestFixtures.withLedger(engine) { ledger, _ in
            // Two first restores of one customer, through different purchases, each made a history.
            try await ledger.saveHistory(
                CustomerHistory(
                    historyID: "h1", environment: "Sandbox", revision: "a", originalTransactionIDs: ["1", "2"]),
                at: Self.date)
            try await ledger.saveHistory(
                CustomerHistory(historyID: "h2", environment: "Sandbox", revision: "b", originalTransactionIDs: ["4"]),
                at: Self.date)
            let merged = CustomerHistory(
                historyID: "h2", environment: "Sandbox", revision: "c", originalTransactionIDs: ["2", "3", "4"])
            try await ledger.saveHistory(merged, at: Self.date)
            for member in ["1", "2", "3", "4"] {
                let found = try #require(try await ledger.history(containing: member))
                #expect(found.historyID == "h2" && found.revision == "c")
                #expect(found.originalTransactionIDs == ["1", "2", "3", "4"])
            }
            #expect(try await ledger.history(containing: "5") == nil)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func eachEnvironmentKeepsItsOwnNotificationCursor(engine: KioskDatabase.Engine) async throws {
        try await LedgerTestFixtures.withLedger(engine) { ledger, _ in
            #expect(try await ledger.notificationCursor(environment: "Sandbox") == nil)
            try await ledger.setNotificationCursor(environment: "Sandbox", to: Self.date, at: Self.date)
            try await ledger.setNotificationCursor(
                environment: "Production", to: Self.date.addingTimeInterval(60), at: Self.date)
            try await ledger.setNotificationCursor(
                environment: "Sandbox", to: Self.date.addingTimeInterval(3600), at: Self.date)
            #expect(try await ledger.notificationCursor(environment: "Sandbox") == Self.date.addingTimeInterval(3600))
            #expect(try await ledger.notificationCursor(environment: "Production") == Self.date.addingTimeInterval(60))
        }
    }
}
