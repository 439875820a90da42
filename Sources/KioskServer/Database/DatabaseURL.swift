import Foundation

/// Where the server keeps its database (`--database`, `KIOSK_DATABASE_URL`): a SQLite file, the embedded default, or
/// a PostgreSQL server that several instances share.
///
/// - `sqlite:PATH` (also `sqlite://PATH`): a SQLite file, created when missing; a relative path is taken from the
///   working directory.
/// - `postgres://user:password@host:port/database?sslmode=MODE` (also `postgresql://`): a PostgreSQL database.
///   The port defaults to 5432; `sslmode` is `disable`, `prefer` (the default, as libpq's), `require` (encrypted,
///   the certificate not checked, as libpq's) or `verify-full` (encrypted to a certificate valid for the host).
///   Characters such as `@`, `:` or `/` in the user or password are percent-encoded.
///
/// Its ``description`` shows the password as `***`: a `DatabaseURL` can be logged.
public struct DatabaseURL: Sendable, Hashable {
    /// A PostgreSQL server and database.
    public struct Postgres: Sendable, Hashable {
        /// The server's host name or address.
        public var host: String
        /// The server's port.
        public var port: Int
        /// The role to connect as.
        public var username: String
        /// The role's password, when the server asks for one. Never logged.
        public var password: String?
        /// The database's name.
        public var database: String
        /// Whether and how the connection is encrypted.
        public var sslMode: SSLMode
    }

    /// Whether and how a PostgreSQL connection is encrypted (libpq's `sslmode`).
    public enum SSLMode: String, Sendable, Hashable, CaseIterable {
        /// Never encrypted.
        case disable
        /// Encrypted when the server offers it, the certificate not checked.
        case prefer
        /// Always encrypted, the certificate not checked.
        case require
        /// Always encrypted, to a certificate that the system trusts and that is valid for the host.
        case verifyFull = "verify-full"
    }

    /// Which database, and where.
    public enum Location: Sendable, Hashable {
        /// A SQLite file at this path.
        case sqlite(path: String)
        /// A PostgreSQL database.
        case postgres(Postgres)
    }

    /// Why a text is not a database URL. Its description shows no password.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, e.g. "the port must be from 1 to 65535".
        public let description: String
    }

    /// Which database, and where.
    public let location: Location

    /// The engine that serves this database.
    public var engine: KioskDatabase.Engine {
        switch location {
        case .sqlite: .sqlite
        case .postgres: .postgres
        }
    }

    /// A database at `location`.
    public init(_ location: Location) { self.location = location }

    /// The SQLite file at `path`.
    public static func sqlite(path: String) -> DatabaseURL { DatabaseURL(.sqlite(path: path)) }

    /// Parses `sqlite:PATH` or `postgres://user:password@host:port/database?sslmode=MODE`.
    /// - Throws: ``Invalid`` saying what is wrong.
    public init(parsing text: String) throws(Invalid) {
        let lowered = text.lowercased()
        if lowered.hasPrefix("sqlite:") {
            var path = Substring(text.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path = path.dropFirst(2) }
            guard !path.isEmpty else {
                throw Invalid(description: "sqlite: needs a file path, e.g. sqlite:/var/lib/kiosk/kiosk.sqlite")
            }
            self.init(.sqlite(path: String(path)))
        } else if lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") {
            self.init(.postgres(try Self.parsePostgres(text)))
        } else {
            throw Invalid(description: "it must start with sqlite: or postgres://")
        }
    }

    private static func parsePostgres(_ text: String) throws(Invalid) -> Postgres {
        guard let components = URLComponents(string: text) else {
            throw Invalid(description: "it is not a valid URL (percent-encode @, : and / in the user and password)")
        }
        var host = components.host ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw Invalid(description: "it names no host") }
        guard let username = components.user, !username.isEmpty else {
            throw Invalid(description: "it names no user (postgres://user:password@host/database)")
        }
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw Invalid(description: "the port must be from 1 to 65535") }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw Invalid(description: "it must name one database after the host (postgres://…@host:5432/kiosk)")
        }
        var sslMode = SSLMode.prefer
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode" else {
                throw Invalid(description: "unknown parameter '\(item.name.prefix(40))' (only sslmode is read)")
            }
            guard let mode = item.value.flatMap(SSLMode.init(rawValue:)) else {
                throw Invalid(description: "sslmode must be disable, prefer, require or verify-full")
            }
            sslMode = mode
        }
        return Postgres(
            host: host, port: port, username: username, password: components.password, database: database,
            sslMode: sslMode)
    }

    /// `text` with whatever stands between the user and the host (the password) replaced by `***`: what may be
    /// shown of a text that did not parse.
    public static func redacting(_ text: String) -> String {
        guard let scheme = text.range(of: "://"), let at = text.range(of: "@", options: .backwards),
            scheme.upperBound < at.lowerBound,
            let colon = text[scheme.upperBound..<at.lowerBound].firstIndex(of: ":")
        else { return text }
        return String(text[..<text.index(after: colon)]) + "***" + String(text[at.lowerBound...])
    }
}

extension DatabaseURL: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The URL with its password shown as `***`.
    public var description: String {
        switch location {
        case .sqlite(let path):
            return "sqlite:\(path)"
        case .postgres(let server):
            let user = server.username.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed) ?? ""
            let host = server.host.contains(":") ? "[\(server.host)]" : server.host
            let query = server.sslMode == .prefer ? "" : "?sslmode=\(server.sslMode.rawValue)"
            return "postgres://\(user)\(server.password == nil ? "" : ":***")@\(host):\(server.port)/"
                + "\(server.database)\(query)"
        }
    }

    /// The same as ``description``: the password stays hidden in debug output too.
    public var debugDescription: String { description }

    /// The redacted URL alone, so that `dump` shows no password either.
    public var customMirror: Mirror { Mirror(self, children: ["url": description]) }
}

extension DatabaseURL.Postgres: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The server as a URL, its password shown as `***`.
    public var description: String { DatabaseURL(.postgres(self)).description }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The redacted URL alone, so that `dump` shows no password either.
    public var customMirror: Mirror { Mirror(self, children: ["url": description]) }
}
