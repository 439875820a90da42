import Foundation
import Testing

@testable import KioskServer

@Suite("Database URL: --database and KIOSK_DATABASE_URL")
struct DatabaseURLTests {
    static let secret = "pa:ss@w/rd"
    static let encoded = "postgres://kiosk:pa%3Ass%40w%2Frd@db.internal:6543/ledger?sslmode=require"

    @Test func sqliteURLsNameAFile() throws {
        #expect(try DatabaseURL(parsing: "sqlite:/var/kiosk.sqlite").location == .sqlite(path: "/var/kiosk.sqlite"))
        #expect(try DatabaseURL(parsing: "sqlite:///srv/k.sqlite").location == .sqlite(path: "/srv/k.sqlite"))
        #expect(try DatabaseURL(parsing: "SQLite:ledger.sqlite").location == .sqlite(path: "ledger.sqlite"))
        #expect(try DatabaseURL(parsing: "sqlite:/srv/k.sqlite").description == "sqlite:/srv/k.sqlite")
    }

    @Test func postgresURLsNameServerDatabaseAndCredentials() throws {
        let url = try DatabaseURL(parsing: Self.encoded)
        #expect(url.engine == .postgres)
        #expect(
            url.location
                == .postgres(
                    DatabaseURL.Postgres(
                        host: "db.internal", port: 6543, username: "kiosk", password: Self.secret, database: "ledger",
                        sslMode: .require)))
        let plain = try DatabaseURL(parsing: "postgresql://kiosk@127.0.0.1/kiosk")
        #expect(
            plain.location
                == .postgres(
                    DatabaseURL.Postgres(
                        host: "127.0.0.1", port: 5432, username: "kiosk", password: nil, database: "kiosk",
                        sslMode: .prefer)))
        #expect(plain.description == "postgres://kiosk@127.0.0.1:5432/kiosk")
        for mode in DatabaseURL.SSLMode.allCases {
            let url = try DatabaseURL(parsing: "postgres://k:p@h/d?sslmode=\(mode.rawValue)")
            guard case .postgres(let server) = url.location else { throw DatabaseURL.Invalid(description: "sqlite") }
            #expect(server.sslMode == mode)
        }
    }

    @Test(arguments: [
        ("", "must start with"),
        ("mysql://k:p@h/d", "must start with"),
        ("sqlite:", "needs a file path"),
        ("postgres://k:p@/d", "no host"),
        ("postgres://h:5432/d", "no user"),
        ("postgres://k:p@h:0/d", "port"),
        ("postgres://k:p@h:5432", "one database"),
        ("postgres://k:p@h:5432/a/b", "one database"),
        ("postgres://k:p@h/d?sslmode=sometimes", "sslmode must be"),
        ("postgres://k:p@h/d?ssl=true", "unknown parameter 'ssl'"),
    ])
    func badURLsAreRefusedWithTheReason(text: String, reason: String) {
        #expect {
            try DatabaseURL(parsing: text)
        } throws: { error in
            "\(error)".contains(reason)
        }
    }

    @Test func thePasswordIsNeverShown() throws {
        let url = try DatabaseURL(parsing: Self.encoded)
        guard case .postgres(let server) = url.location else { throw DatabaseURL.Invalid(description: "sqlite") }
        var dumped = ""
        dump(url, to: &dumped)
        dump(server, to: &dumped)
        let shown = [
            url.description, "\(url)", String(reflecting: url), "\(url.location)", String(reflecting: url.location),
            "\(server)", dumped,
        ]
        for text in shown {
            #expect(!text.contains("pa:ss") && !text.contains("pa%3Ass"), "\(text)")
        }
        #expect(url.description == "postgres://kiosk:***@db.internal:6543/ledger?sslmode=require")
        #expect(
            DatabaseURL.redacting("postgres://kiosk:pa:ss@w/rd@h/d?sslmode=x") == "postgres://kiosk:***@h/d?sslmode=x")
        #expect(DatabaseURL.redacting("postgres://kiosk@h/d") == "postgres://kiosk@h/d")
    }

    @Test func theOptionWinsOverTheVariableAndTheDefaultIsTheDataFolder() throws {
        let defaults = try ServerConfiguration(options: ["data": "/var/lib/kiosk"], environment: [:])
        #expect(defaults.databaseURL == .sqlite(path: "/var/lib/kiosk/kiosk.sqlite"))
        let fromVariable = try ServerConfiguration(
            options: [:], environment: ["KIOSK_DATABASE_URL": "postgres://k:p@h/d"])
        #expect(fromVariable.databaseURL.engine == .postgres)
        let fromOption = try ServerConfiguration(
            options: ["database": "sqlite:/tmp/x.sqlite"], environment: ["KIOSK_DATABASE_URL": "postgres://k:p@h/d"])
        #expect(fromOption.databaseURL == .sqlite(path: "/tmp/x.sqlite"))
        #expect(ServerSetting.named("database").environmentVariable == "KIOSK_DATABASE_URL")
    }

    @Test func aBadURLIsRefusedByNameWithoutItsPassword() {
        for (options, environment, source) in [
            (["database": "postgres://kiosk:hunter2@h/d?sslmode=maybe"], [:], "--database"),
            ([:], ["KIOSK_DATABASE_URL": "postgres://kiosk:hunter2@h/d?sslmode=maybe"], "KIOSK_DATABASE_URL"),
        ] {
            #expect {
                try ServerConfiguration(options: options, environment: environment)
            } throws: { error in
                let text = "\(error)"
                return text.hasPrefix(source) && text.contains("sslmode must be") && !text.contains("hunter2")
            }
        }
    }
}
