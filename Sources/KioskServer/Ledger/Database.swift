import Foundation
import Logging
import SQLKit
import SQLiteKit

/// The embedded database: one SQLite file in the data directory, shared by the ledger and the sandbox store.
public struct EmbeddedDatabase: Sendable {
    private let connection: SQLiteConnection
    /// The SQLKit view of the connection.
    public let sql: any SQLDatabase

    /// Opens (creating if needed) `kiosk.sqlite` in `dataDirectory`, in WAL mode.
    public static func open(in dataDirectory: URL, logger: Logger) async throws -> EmbeddedDatabase {
        let path = dataDirectory.appendingPathComponent("kiosk.sqlite").path
        let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        let sql = connection.sql()
        try await sql.raw("PRAGMA journal_mode=WAL").run()
        try await sql.raw("PRAGMA busy_timeout=5000").run()
        return EmbeddedDatabase(connection: connection, sql: sql)
    }

    /// Closes the connection. Runs in its own task, so that it closes even when called from a cancelled one (the
    /// thread pool refuses work from cancelled tasks).
    public func close() async throws {
        let connection = self.connection
        try await Task { try await connection.close() }.value
    }
}
