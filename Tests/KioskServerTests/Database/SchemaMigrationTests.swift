import Foundation
import KioskServerTestSupport
import KioskStore
import SQLKit
import SQLiteKit
import Testing

@testable import KioskServer

@Suite("Schema migrations: versioned, concurrent, refused when newer, adopting old files")
struct SchemaMigrationTests {
    /// The rows of `kiosk_schema_migrations`, by version.
    static func recordedVersions(in database: KioskDatabase) async throws -> [Int] {
        try await database.sql.raw("SELECT version FROM kiosk_schema_migrations ORDER BY version")
            .all(decodingColumn: "version", as: Int.self)
    }

    @Test(arguments: TestDatabase.engines)
    func aNewDatabaseIsBroughtToTheLatestVersionOnce(engine: KioskDatabase.Engine) async throws {
        try await TestDatabase.withURL(engine) { url in
            try await TestDatabase.withOpened(url) { database in
                #expect(try await database.schemaVersion() == SchemaMigrations.latestVersion)
                #expect(try await Self.recordedVersions(in: database) == SchemaMigrations.all.map(\.version))
                let columns = try await SchemaMigration.columns(
                    of: "ledger_transactions", in: database.sql, engine: engine)
                #expect(columns.isSuperset(of: ["transaction_id", "revocation_scope", "reinstated_at_ms"]))
                #expect(try await SchemaMigration.columns(of: "no_such_table", in: database.sql, engine: engine) == [])
            }
            // Opening it again applies nothing.
            try await TestDatabase.withOpened(url) { database in
                #expect(try await Self.recordedVersions(in: database) == SchemaMigrations.all.map(\.version))
                try await database.checkReachable(timeout: TestDatabase.connectionWait)
            }
        }
    }

    @Test func theMigrationLockKeyIsTheDocumentedOne() {
        // Instances of different releases must agree on it: it never changes.
        #expect(SchemaMigrations.lockKey == 5_424_954_445_308_709_191)
        #expect(withUnsafeBytes(of: SchemaMigrations.lockKey.bigEndian) { Array($0) } == Array("KIOSKMIG".utf8))
    }

    @Test(arguments: TestDatabase.engines)
    func twoInstancesStartingAtOnceMigrateOnce(engine: KioskDatabase.Engine) async throws {
        try await TestDatabase.withURL(engine) { url in
            let log = LogRecorder(level: .notice)
            let logger = log.logger
            let opened = try await withThrowingTaskGroup(of: KioskDatabase.self) { group in
                for _ in 0..<2 { group.addTask { try await KioskDatabase.open(url, logger: logger) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for database in opened {
                #expect(try await database.schemaVersion() == SchemaMigrations.latestVersion)
            }
            #expect(try await Self.recordedVersions(in: opened[0]) == SchemaMigrations.all.map(\.version))
            #expect(log.count(of: "database schema migrated") == 1, "one instance migrated, the other found it done")
            for database in opened { try await database.close() }
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aDatabaseOfANewerReleaseIsRefused(engine: KioskDatabase.Engine) async throws {
        let newer = SchemaMigrations.latestVersion + 1
        try await TestDatabase.withURL(engine) { url in
            try await TestDatabase.withOpened(url) { database in
                try await database.sql.raw(
                    """
                    INSERT INTO kiosk_schema_migrations (version, summary, applied_at_ms)
                    VALUES (\(bind: newer), 'from the future', 0)
                    """
                ).run()
            }
            let refusal = KioskDatabaseError.schemaNewerThanBinary(
                found: newer, supported: SchemaMigrations.latestVersion)
            await #expect(throws: refusal) {
                try await KioskDatabase.open(url, logger: TestDatabase.logger)
            }
            #expect(
                KioskDatabaseError.schemaNewerThanBinary(found: newer, supported: 1).description.contains(
                    "newer than this release"))
        }
    }

    /// The tables as the releases before migrations made them (SQLKit's builders on SQLite), before the columns
    /// later releases added, with rows.
    static let oldRelease = [
        """
        CREATE TABLE "ledger_transactions"("transaction_id" TEXT PRIMARY KEY, "original_transaction_id" TEXT NOT NULL,
            "product_id" TEXT NOT NULL, "environment" TEXT NOT NULL, "bundle_id" TEXT NOT NULL,
            "purchase_date_ms" INTEGER NOT NULL, "expires_date_ms" INTEGER, "cancellation_date_ms" INTEGER,
            "quantity" INTEGER NOT NULL, "verified_at_ms" INTEGER NOT NULL)
        """,
        """
        INSERT INTO ledger_transactions VALUES
            ('t1', 't1', 'com.example.issue', 'Sandbox', 'com.example.kiosk', 1000, NULL, NULL, 1, 2000),
            ('t2', 't2', 'com.example.book', 'Sandbox', 'com.example.kiosk', 3000, NULL, 4000, 1, 5000)
        """,
        """
        CREATE TABLE "ledger_notifications"("notification_uuid" TEXT PRIMARY KEY, "notification_type" TEXT NOT NULL,
            "subtype" TEXT, "signed_date_ms" INTEGER NOT NULL, "received_at_ms" INTEGER NOT NULL)
        """,
        "INSERT INTO ledger_notifications VALUES ('n1', 'REFUND', NULL, 4000, 4100)",
        """
        CREATE TABLE "ledger_subscriptions"("original_transaction_id" TEXT PRIMARY KEY,
            "last_signed_date_ms" INTEGER NOT NULL, "grace_expires_ms" INTEGER)
        """,
        "INSERT INTO ledger_subscriptions VALUES ('s1', 6000, 7000)",
        """
        CREATE TABLE ledger_installations (original_transaction_id TEXT NOT NULL, installation_id TEXT NOT NULL,
            first_seen_ms BIGINT NOT NULL, PRIMARY KEY (original_transaction_id, installation_id))
        """,
        "INSERT INTO ledger_installations VALUES ('t1', 'phone', 8000)",
        """
        CREATE TABLE "sandbox_purchases"("transaction_id" TEXT PRIMARY KEY, "original_transaction_id" TEXT NOT NULL,
            "user_name" TEXT NOT NULL, "product_id" TEXT NOT NULL, "quantity" INTEGER NOT NULL,
            "purchase_date_ms" INTEGER NOT NULL, "expires_date_ms" INTEGER, "cancellation_date_ms" INTEGER)
        """,
        "INSERT INTO sandbox_purchases VALUES ('t1', 't1', 'alice', 'com.example.issue', 1, 1000, NULL, NULL)",
    ]

    @Test func aFileOfAnOlderReleaseIsAdoptedWithItsRows() async throws {
        try await TestDatabase.withURL(.sqlite) { url in
            try await TestDatabase.prepareOldRelease(at: url, statements: Self.oldRelease)
            try await TestDatabase.withOpened(url) { database in
                #expect(try await database.schemaVersion() == SchemaMigrations.latestVersion)
                let ledger = SQLLedger(database: database)
                #expect(try await ledger.count() == 2)
                let first = try #require(try await ledger.transaction(id: "t1"))
                #expect(first.productID == "com.example.issue" && first.purchaseDate == Date(milliseconds: 1000))
                #expect(first.cancellationDate == nil && first.verifiedAt == Date(milliseconds: 2000))
                // A cancellation recorded before scopes existed is scoped as a refund says.
                #expect(
                    try await ledger.revocations()
                        == [Revocation(transactionID: "t2", originalTransactionID: "t2", scope: .purchase)])
                #expect(try await ledger.hasNotification(uuid: "n1"))
                #expect(
                    try await ledger.subscriptionState(originalTransactionID: "s1")
                        == SubscriptionState(
                            originalTransactionID: "s1", lastSignedDate: Date(milliseconds: 6000),
                            gracePeriodExpiresDate: Date(milliseconds: 7000)))
                #expect(
                    try await ledger.installations(originalTransactionID: "t1")
                        == [
                            InstallationRecord(
                                installationID: "phone", firstSeen: Date(milliseconds: 8000),
                                lastSeen: Date(milliseconds: 8000))
                        ])
                let buyers = try await database.sql.raw("SELECT user_name FROM sandbox_purchases")
                    .all(decodingColumn: "user_name", as: String.self)
                #expect(buyers == ["alice"])
                // The columns added since work.
                #expect(
                    try await ledger.reinstate(transactionID: "t2", at: Date(milliseconds: 9000))
                        == Revocation(transactionID: "t2", originalTransactionID: "t2", scope: .purchase))
                #expect(try await ledger.revocations().isEmpty)
            }
        }
    }

    @Test func aMigrationThatFailsIsRolledBackAndReported() async throws {
        try await TestDatabase.withURL(.sqlite) { url in
            // A file no release wrote: its installations have no first_seen_ms for last_seen_ms to start from.
            try await TestDatabase.prepareOldRelease(
                at: url,
                statements: ["CREATE TABLE ledger_installations (original_transaction_id TEXT, installation_id TEXT)"])
            let error = await #expect(throws: KioskDatabaseError.self) {
                try await KioskDatabase.open(url, logger: TestDatabase.logger)
            }
            guard case .migrationFailed(let database, let reason)? = error else {
                Issue.record("expected a failed migration, got \(String(describing: error))")
                return
            }
            #expect(database == url.description && reason.contains("first_seen_ms"))
            // Nothing of migration 1 stayed.
            guard case .sqlite(let path) = url.location else { return }
            let connection = try await SQLiteConnection.open(storage: .file(path: path))
            let tables = try? await connection.sql().raw("SELECT name FROM sqlite_master WHERE type = 'table'")
                .all(decodingColumn: "name", as: String.self)
            let recorded = try? await connection.sql().raw("SELECT COUNT(*) AS n FROM kiosk_schema_migrations")
                .first(decodingColumn: "n", as: Int.self)
            try await connection.close()
            #expect(Set(tables ?? []) == ["ledger_installations", "kiosk_schema_migrations"])
            #expect(recorded == 0)
        }
    }
}
