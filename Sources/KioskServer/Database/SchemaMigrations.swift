import Foundation
import KioskStore
import Logging
import SQLKit

/// The database schema's history, and how a database is brought up to date.
///
/// `kiosk_schema_migrations` records each migration applied (its version, summary and time); the schema's version is
/// the highest recorded, 0 for a database of a release before migrations (whose tables migration 1 adopts as they
/// are). At every start, the migrations the database lacks are applied in order, all in one transaction with their
/// records, so that a crash or a failure leaves the schema as it was or fully migrated, never halfway:
///
/// - PostgreSQL: the whole run holds the session advisory lock ``lockKey``, so that instances starting at once apply
///   each migration once; the others wait, then find nothing left to do.
/// - SQLite: the transaction begins `IMMEDIATE` (the file's write lock, which other processes wait for) and reads
///   the version again first.
///
/// A database whose version is newer than ``latestVersion`` is refused
/// (``KioskDatabaseError/schemaNewerThanBinary(found:supported:)``): this release could misread it.
///
/// A schema change is a new migration appended to ``all``; a released migration is never edited.
public enum SchemaMigrations {
    /// The PostgreSQL advisory lock held while migrating: the ASCII bytes of `KIOSKMIG` as one 64-bit key
    /// (`SELECT pg_advisory_lock(5424954445308709191)`). Other periodic work must use other keys.
    public static let lockKey: Int64 = 0x4B49_4F53_4B4D_4947

    /// Every migration, in order.
    static let all: [SchemaMigration] = [
        .initialSchema, .revocationEvents, .sandboxKeys, .sandboxAppStoreAPI, .appStoreAPIState, .deliveries,
    ]

    /// The schema version this release writes and reads.
    public static var latestVersion: Int { all.last?.version ?? 0 }

    /// Applies to `database` every migration it lacks.
    /// - Throws: ``KioskDatabaseError/schemaNewerThanBinary(found:supported:)`` when its schema is newer than
    ///   ``latestVersion``; the driver's error when a migration fails (that one is rolled back).
    static func apply(to database: KioskDatabase, logger: Logger) async throws {
        let engine = database.engine
        let (before, applied) = try await database.withMigrationLock { session in
            try await session.raw(
                """
                CREATE TABLE IF NOT EXISTS kiosk_schema_migrations (
                    version INTEGER PRIMARY KEY,
                    summary TEXT NOT NULL,
                    applied_at_ms BIGINT NOT NULL)
                """
            ).run()
            let before = try await version(in: session)
            return (before, try await applyMissing(on: session, engine: engine))
        }
        if let last = applied.last {
            logger.notice(
                "database schema migrated",
                metadata: ["database": "\(database.url)", "from": "\(before)", "to": "\(last)"])
        }
    }

    /// Applies, in one transaction, every migration the database lacks, in order; returns their versions. One
    /// transaction for all: on SQLite it is what keeps another process from migrating at the same time (its
    /// `BEGIN IMMEDIATE` waits), and a failure leaves the schema as it was, never halfway.
    private static func applyMissing(on session: any SQLDatabase, engine: KioskDatabase.Engine) async throws -> [Int] {
        switch engine {
        case .sqlite: try await SQLiteDriver.beginImmediate(on: session)
        case .postgres: try await session.raw("BEGIN").run()
        }
        do {
            let current = try await version(in: session)
            guard current <= latestVersion else {
                throw KioskDatabaseError.schemaNewerThanBinary(found: current, supported: latestVersion)
            }
            let missing = all.filter { $0.version > current }
            for migration in missing {
                try await migration.apply(session, engine)
                try await session.insert(into: "kiosk_schema_migrations")
                    .columns("version", "summary", "applied_at_ms")
                    .values(
                        SQLBind(migration.version), SQLBind(migration.summary),
                        SQLBind(Date().millisecondsSince1970)
                    )
                    .run()
            }
            try await session.raw("COMMIT").run()
            return missing.map(\.version)
        } catch {
            try? await session.raw("ROLLBACK").run()
            throw error
        }
    }

    /// The schema's version on `session`: the highest migration recorded.
    static func version(in session: any SQLDatabase) async throws -> Int {
        let highest = try await session.raw("SELECT MAX(version) AS version FROM kiosk_schema_migrations")
            .first(decodingColumn: "version", as: Int?.self)
        return (highest ?? nil) ?? 0
    }
}
