import KioskCore
import PostgresNIO

/// Why the database cannot be used. Its descriptions name the database by its redacted URL: no password.
public enum KioskDatabaseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The schema was written by a newer release (version `found`) than this one knows (`supported`): this release
    /// could misread it, so it refuses to start.
    case schemaNewerThanBinary(found: Int, supported: Int)
    /// The database could not be opened or did not answer.
    case unreachable(database: String, reason: String)
    /// A schema migration failed (and was rolled back), for example for lack of a privilege.
    case migrationFailed(database: String, reason: String)
    /// A PostgreSQL transaction kept conflicting with concurrent ones after `attempts` tries.
    case tooManyConflicts(attempts: Int)
    /// No connection of the pool came free or could be made within `waited` (the database is down, or overloaded).
    case noConnection(database: String, waited: Duration)

    /// What happened, and what to do.
    public var description: String {
        switch self {
        case .schemaNewerThanBinary(let found, let supported):
            "The database's schema is at version \(found), newer than this release of Kiosk knows (\(supported)): "
                + "it was written by a newer release. Run that release or a later one, or a database of this release."
        case .unreachable(let database, let reason):
            "Cannot use the database \(database): \(reason)."
        case .migrationFailed(let database, let reason):
            "Cannot bring the schema of the database \(database) up to date: \(reason)."
        case .tooManyConflicts(let attempts):
            "A database transaction conflicted with concurrent ones \(attempts) times in a row; try again."
        case .noConnection(let database, let waited):
            "No connection to the database \(database) within \(waited)."
        }
    }

    /// What a driver's error says, without SQL, bound values or secrets: PostgreSQL's message, or the connection
    /// error below it.
    static func reason(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return String(describing: error) }
        if let message = error.serverInfo?[.message] { return message }
        if let underlying = error.underlying { return String(describing: underlying) }
        return "\(error.code)"
    }
}

/// How a request meets a database that fails it: 503 `database_unavailable`, with `Retry-After`, when it may pass by
/// itself (no connection, conflicts); 500 otherwise. The message names no database: its address is the operator's
/// business, and the log has it.
extension KioskDatabaseError: APIResponseError {
    /// `database_unavailable` for what passes by itself, `internal_error` for the rest.
    public var errorCode: APIErrorCode {
        switch self {
        case .unreachable, .noConnection, .tooManyConflicts: .databaseUnavailable
        case .schemaNewerThanBinary, .migrationFailed: .internalError
        }
    }

    /// A sentence for the client.
    public var message: String {
        errorCode == .databaseUnavailable
            ? "The server's database is unavailable for a moment; nothing was changed. Try again shortly."
            : "The server met an unexpected error."
    }

    /// `Retry-After: 2` on a 503.
    public var headers: [String: String] { errorCode == .databaseUnavailable ? ["Retry-After": "2"] : [:] }
}
