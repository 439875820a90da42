import Foundation
import Testing

@testable import KioskServer

/// Two ledgers, each over its own ``KioskDatabase`` opened on one database (PostgreSQL: two pools, as two
/// instances have; SQLite: two connections to one file, as two processes have).
@Suite("Ledger across instances")
struct LedgerAcrossInstancesTests {
    /// Runs `body` with two databases opened on one fresh database on `engine`.
    static func withTwoInstances(
        _ engine: KioskDatabase.Engine, _ body: (KioskDatabase, KioskDatabase) async throws -> Void
    ) async throws {
        try await TestDatabase.withURL(engine) { url in
            try await TestDatabase.withOpened(url) { first in
                try await TestDatabase.withOpened(url) { second in try await body(first, second) }
            }
        }
    }

    @Test(arguments: TestDatabase.engines)
    func theInstallationCapHoldsExactlyUnderConcurrentAdmissions(engine: KioskDatabase.Engine) async throws {
        try await Self.withTwoInstances(engine) { first, second in
            let ledgers = [SQLLedger(database: first), SQLLedger(database: second)]
            let now = Date()
            let admissions = try await withThrowingTaskGroup(of: InstallationAdmission.self) { group in
                for index in 0..<16 {
                    let ledger = ledgers[index % 2]
                    group.addTask {
                        try await ledger.admitInstallation(
                            "device-\(index)", originalTransactionID: "p", limit: 3, at: now)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let admitted = admissions.filter { if case .admitted = $0 { true } else { false } }
            #expect(admitted.count == 3)
            #expect(admissions.filter { $0 == .refused(count: 3) }.count == 13)
            for ledger in ledgers {
                #expect(try await ledger.installations(originalTransactionID: "p").count == 3)
            }
        }
    }
}
