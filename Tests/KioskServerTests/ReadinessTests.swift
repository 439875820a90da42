import Foundation
import Logging
import Testing

@testable import KioskServer

/// `GET /readyz`'s checks: the database answers in time; the catalog's size is reported.
@Suite("Readiness")
struct ReadinessTests {
    struct DatabaseDown: Error {}

    static func catalog(_ directory: URL) async -> ContentCatalog {
        await ContentCatalog(contentDirectory: directory, dataDirectory: nil, logger: Logger(label: "test"))
    }

    static var sampleContent: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("content")
    }

    @Test func readyWhenTheDatabaseAnswersAndTheCatalogIsLoaded() async throws {
        let readiness = Readiness(pingDatabase: {}, catalog: await Self.catalog(Self.sampleContent))
        let checks = try await readiness.check()
        #expect(checks["database"] == "ok")
        #expect(checks["catalog"]?.hasPrefix("4 products") == true, "\(checks)")
    }

    @Test func aDatabaseThatFailsIsNotReady() async throws {
        let readiness = Readiness(
            pingDatabase: { throw DatabaseDown() }, catalog: await Self.catalog(Self.sampleContent))
        await #expect(throws: Readiness.Failure(check: "database", problem: "DatabaseDown")) {
            try await readiness.check()
        }
    }

    /// A database that never answers makes the answer wait the timeout, not longer.
    @Test func aDatabaseThatHangsIsNotReadyAfterTheTimeout() async throws {
        var readiness = Readiness(
            pingDatabase: { try await Task.sleep(for: .seconds(3600)) },
            catalog: await Self.catalog(Self.sampleContent))
        readiness.timeout = .milliseconds(50)
        await #expect(throws: Readiness.Failure(check: "database", problem: "no answer within 0.05 seconds")) {
            try await readiness.check()
        }
    }
}
