import Foundation
import KioskStore

/// One setting of `kiosk serve`: its command-line option, its environment variable, how its text is read and
/// checked, and how its default is shown. The default itself is the property's initial value in
/// ``ServerConfiguration``; ``ServerSetting/all`` is the one table the command, its help and docs/configuration.md
/// follow (checked by ConfigurationReferenceTests).
///
/// A value is taken from the command line first, then from the environment (`KIOSK_` and the option's name in
/// upper case, `-` as `_`; an empty variable counts as unset), else the default stays.
public struct ServerSetting: Sendable {
    /// The option's name without dashes, e.g. `max-installations`.
    public let name: String
    /// What the setting does, for `--help` and docs/configuration.md.
    public let help: String
    /// Whether the setting has a command-line option. Secrets have none: a command line is visible to every user
    /// of the machine (`ps`), so they come from the environment only.
    public let hasOption: Bool
    /// Whether the setting is a switch (`--allow-public-sandbox`), given without a value on the command line.
    public let isFlag: Bool
    private let read: @Sendable (String, inout ServerConfiguration) throws(ServerSetting.Invalid) -> Void
    private let show: @Sendable (ServerConfiguration) -> String
    private let quote: @Sendable (String) -> String

    /// The command-line option, e.g. `--max-installations`.
    public var option: String { "--\(name)" }
    /// The environment variable, e.g. `KIOSK_MAX_INSTALLATIONS`.
    public let environmentVariable: String
    /// The default as text (`none` for an unset optional value).
    public var defaultDescription: String { show(ServerConfiguration()) }

    /// Why a value was not accepted; the caller adds where the value came from.
    struct Invalid: Error {
        /// What the value must be, e.g. "a whole number from 0 to 65535".
        var expected: String
    }

    /// A setting of type `Value`.
    init<Value>(
        _ name: String, _ keyPath: WritableKeyPath<ServerConfiguration, Value> & Sendable, _ parser: Parser<Value>,
        help: String, hasOption: Bool = true
    ) {
        self.name = name
        self.help = help
        self.hasOption = hasOption
        self.isFlag = parser.isFlag
        self.environmentVariable = Self.variable(for: name)
        self.quote = parser.quote
        self.read = { (text, configuration) throws(Invalid) in configuration[keyPath: keyPath] = try parser.parse(text)
        }
        self.show = { parser.format($0[keyPath: keyPath]) }
    }

    /// A setting whose value may be absent (`nil`: not set, the behaviour described in `help`), read from
    /// `variable` rather than the variable its name gives when one is named.
    init<Value>(
        _ name: String, _ keyPath: WritableKeyPath<ServerConfiguration, Value?> & Sendable, _ parser: Parser<Value>,
        help: String, hasOption: Bool = true, unset: String = "none", variable: String? = nil
    ) {
        self.name = name
        self.help = help
        self.hasOption = hasOption
        self.isFlag = parser.isFlag
        self.environmentVariable = variable ?? Self.variable(for: name)
        self.quote = parser.quote
        self.read = { (text, configuration) throws(Invalid) in configuration[keyPath: keyPath] = try parser.parse(text)
        }
        self.show = { $0[keyPath: keyPath].map(parser.format) ?? unset }
    }

    /// `KIOSK_` and `name` in upper case, `-` as `_`.
    private static func variable(for name: String) -> String {
        "KIOSK_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// Applies `text`, read from `source` (an option or a variable), to `configuration`.
    func apply(_ text: String, from source: String, to configuration: inout ServerConfiguration)
        throws(ServerConfigurationError)
    {
        do {
            try read(text, &configuration)
        } catch {
            let shown = hasOption ? "'\(quote(text).prefix(200))'" : "its value"
            throw ServerConfigurationError("\(source): \(shown) is not \(error.expected).")
        }
    }

    /// How a setting's text becomes a value, and a value text again.
    struct Parser<Value>: Sendable {
        let parse: @Sendable (String) throws(Invalid) -> Value
        let format: @Sendable (Value) -> String
        var isFlag = false
        /// What an error message may show of a text that was refused.
        var quote: @Sendable (String) -> String = { $0 }
    }
}

extension ServerSetting.Parser where Value == String {
    /// Any text that is not empty or blank.
    static var text: Self {
        Self(
            parse: { (text) throws(ServerSetting.Invalid) in
                guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { throw .init(expected: "empty") }
                return text
            },
            format: { $0 })
    }
}

extension ServerSetting.Parser where Value == Int {
    /// A whole number in `range`.
    static func integer(_ range: ClosedRange<Int>) -> Self {
        let expected =
            range.upperBound == .max
            ? "a whole number of at least \(range.lowerBound)"
            : "a whole number from \(range.lowerBound) to \(range.upperBound)"
        return Self(
            parse: { (text) throws(ServerSetting.Invalid) in
                guard let value = Int(text), range.contains(value) else { throw .init(expected: expected) }
                return value
            },
            format: { String($0) })
    }
}

extension ServerSetting.Parser where Value == UInt64 {
    /// A whole number from 0 to 2⁶⁴ - 1.
    static var unsigned: Self {
        Self(
            parse: { (text) throws(ServerSetting.Invalid) in
                guard let value = UInt64(text) else { throw .init(expected: "a whole number from 0 to 2^64 - 1") }
                return value
            },
            format: { String($0) })
    }
}

extension ServerSetting.Parser where Value == Duration {
    /// Whole seconds, at least `minimum`.
    static func seconds(minimum: Int) -> Self {
        Self(
            parse: { (text) throws(ServerSetting.Invalid) in
                guard let value = Int(text), value >= minimum, value <= 365 * 86_400 else {
                    throw .init(expected: "a whole number of seconds from \(minimum) to 31536000")
                }
                return .seconds(value)
            },
            format: { String($0.components.seconds) })
    }
}

extension ServerSetting.Parser where Value == Bool {
    /// A switch: `true`, `1`, `yes` or `on`, or `false`, `0`, `no` or `off` (any case).
    static var flag: Self {
        Self(
            parse: { (text) throws(ServerSetting.Invalid) in
                switch text.lowercased() {
                case "true", "1", "yes", "on": return true
                case "false", "0", "no", "off": return false
                default: throw .init(expected: "true or false")
                }
            },
            format: { $0 ? "on" : "off" }, isFlag: true)
    }
}

extension ServerSetting.Parser where Value == URL {
    /// A path on this machine.
    static var path: Self {
        Self(
            parse: { (text) throws(ServerSetting.Invalid) in
                guard !text.isEmpty else { throw .init(expected: "a path") }
                return URL(fileURLWithPath: text)
            },
            format: { $0.relativePath })
    }

    /// An `https` URL, or an `http` one to a loopback address (a test store on this machine).
    static var storeURL: Self {
        Self(
            parse: { (text) throws(ServerSetting.Invalid) in
                guard let url = URL(string: text), ServerConfiguration.isAcceptableStoreURL(url) else {
                    throw .init(expected: "an https URL (http only to a loopback address)")
                }
                return url
            },
            format: { $0.absoluteString })
    }
}

extension ServerSetting.Parser where Value == DatabaseURL {
    /// `sqlite:PATH` or `postgres://user:password@host:port/database`; shown with the password as `***`.
    static var database: Self {
        Self(
            parse: { (text) throws(ServerSetting.Invalid) in
                do {
                    return try DatabaseURL(parsing: text)
                } catch {
                    throw .init(
                        expected: "a database URL, sqlite:PATH or postgres://user:password@host:port/database "
                            + "(\(error))")
                }
            },
            format: { $0.description }, quote: { DatabaseURL.redacting($0) })
    }
}

extension ServerSetting.Parser where Value: RawRepresentable<String> & CaseIterable {
    /// One of the type's raw values (`sandbox or appstore`, `none, decline, grant_full or grant_prorated`).
    static var oneOf: Self {
        let names = Value.allCases.map(\.rawValue)
        let expected =
            names.count > 1
            ? names.dropLast().joined(separator: ", ") + " or " + names[names.count - 1] : names.joined()
        return Self(
            parse: { (text) throws(ServerSetting.Invalid) in
                guard let value = Value(rawValue: text) else { throw .init(expected: expected) }
                return value
            },
            format: { $0.rawValue })
    }
}

extension ServerSetting.Parser where Value == Set<String> {
    /// A comma-separated list of StoreKit environments: `Production`, `Sandbox` or both.
    static var environments: Self {
        Self(
            parse: { (text) throws(ServerSetting.Invalid) in
                let names = Set(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                guard !names.isEmpty, names.allSatisfy({ StoreEnvironment(rawValue: $0) != nil }) else {
                    throw .init(expected: "a comma-separated list of Production and Sandbox")
                }
                return names
            },
            format: { $0.sorted().joined(separator: ",") })
    }
}

extension ServerSetting.Parser where Value == FaultProfile {
    /// A fault profile or spec (see docs/fault-injection.md).
    static var faults: Self {
        Self(
            parse: { (text) throws(ServerSetting.Invalid) in
                do {
                    return try FaultProfile(parsing: text)
                } catch {
                    throw .init(expected: "a fault profile or spec (\(error))")
                }
            },
            format: { "\($0)" })
    }
}

extension ServerSetting.Parser where Value == S3Location.AddressingStyle {
    /// `path` or `virtual`.
    static var addressing: Self {
        Self(
            parse: { (text) throws(ServerSetting.Invalid) in
                guard let style = S3Location.AddressingStyle(rawValue: text) else {
                    throw .init(expected: "path or virtual")
                }
                return style
            },
            format: { $0.rawValue })
    }
}

extension ServerSetting.Parser where Value == ContentOffload {
    /// `nginx:PREFIX` or `s3:BUCKET[/PREFIX]` (``ContentOffload/init(parsing:)``).
    static var offload: Self {
        Self(
            parse: { (text) throws(ServerSetting.Invalid) in
                guard let offload = ContentOffload(parsing: text) else {
                    throw .init(
                        expected: "nginx:PREFIX, PREFIX an absolute path of letters, digits, -._~ and / outside /v1 "
                            + "and /sandbox, such as nginx:/_kiosk/files, or s3:BUCKET[/PREFIX]")
                }
                return offload
            },
            format: { $0.description })
    }
}

extension ServerSetting {
    /// Every setting of `kiosk serve`, in the order of `--help`.
    public static let all: [ServerSetting] = [
        ServerSetting("host", \.host, .text, help: "The address to bind."),
        ServerSetting("port", \.port, .integer(0...65535), help: "The port to bind; 0 picks a free one."),
        ServerSetting(
            "content", \.contentDirectory, .path, help: "The content folder (<product_id>/Info.json + Contents/)."),
        ServerSetting(
            "data", \.dataDirectory, .path, help: "The data folder: ledger, hash cache, keys (made owner-only)."),
        ServerSetting(
            "database", \.database, .database,
            help: "The database: sqlite:PATH or postgres://user:password@host:port/database[?sslmode=…].",
            unset: "sqlite:kiosk.sqlite in --data", variable: "KIOSK_DATABASE_URL"),
        ServerSetting(
            "database-wait", \.databaseWait, .seconds(minimum: 1),
            help: "Seconds a request waits for a PostgreSQL connection before it is refused (503 "
                + "database_unavailable)."),
        ServerSetting("store", \.store, .oneOf, help: "Which store verifies receipts: sandbox or appstore."),
        ServerSetting(
            "bundle-id", \.bundleID, .text,
            help: "The app's bundle ID; receipts of other apps are refused. Required (not the example) with appstore."),
        ServerSetting(
            "allow-public-sandbox", \.allowPublicSandbox, .flag,
            help: "Let the sandbox store, which sells everything for free, listen on a non-loopback address."),
        ServerSetting(
            "public-metrics", \.publicMetrics, .flag, help: "Serve /metrics to every client, not only to loopback ones."
        ),
        ServerSetting(
            "verify-url", \.productionVerifyURL, .storeURL, help: "The production verifyReceipt URL (appstore mode)."),
        ServerSetting(
            "sandbox-verify-url", \.sandboxVerifyURL, .storeURL,
            help: "The sandbox verifyReceipt URL (appstore mode)."),
        ServerSetting(
            "app-store-api-url", \.appStoreAPIURL, .storeURL,
            help: "The production App Store Server API; a path in it prefixes every request's.",
            unset: "https://api.storekit.itunes.apple.com; with --store sandbox the sandbox store's own"),
        ServerSetting(
            "app-store-sandbox-api-url", \.appStoreSandboxAPIURL, .storeURL,
            help: "The sandbox App Store Server API; a path in it prefixes every request's.",
            unset: "https://api.storekit-sandbox.itunes.apple.com; with --store sandbox the sandbox store's own"),
        ServerSetting(
            "app-store-key-file", \.appStoreKeyFile, .path,
            help: "The .p8 file of the in-app purchase key that signs App Store Server API requests.",
            unset: "none: the API is off"),
        ServerSetting(
            "app-store-key-id", \.appStoreKeyID, .text, help: "That key's ID in App Store Connect.",
            unset: "none: the API is off"),
        ServerSetting(
            "app-store-issuer-id", \.appStoreIssuerID, .text, help: "The team's issuer ID in App Store Connect.",
            unset: "none: the API is off"),
        ServerSetting(
            "app-store-key", \.appStoreKey, .text, help: "The key's PEM text, instead of the key file.",
            hasOption: false),
        ServerSetting(
            "transaction-refresh", \.transactionRefresh, .seconds(minimum: 0),
            help: "Seconds the App Store Server API's confirmation of a transaction holds before a grant looks it up "
                + "again (0: at every grant)."),
        ServerSetting(
            "notification-history-interval", \.notificationHistoryInterval, .seconds(minimum: 0),
            help: "Seconds between catch-ups on the App Store's notification history, the first at start (0: off)."),
        ServerSetting(
            "receipt-validation", \.receiptValidation, .oneOf,
            help: "How app receipts are verified: verify-receipt (the store's endpoint) or api (read and verified "
                + "locally, kept fresh by the App Store Server API; appstore mode)."),
        ServerSetting(
            "receipt-local-testing-root", \.receiptLocalTestingRoot, .path,
            help: "A PEM certificate whose Xcode StoreKit-testing receipts are accepted with --receipt-validation api.",
            unset: "none: Xcode receipts are refused"),
        ServerSetting(
            "notification-history-days", \.notificationHistoryDays, .integer(1...180),
            help: "How many days back the very first notification history catch-up starts (Apple keeps 180)."),
        ServerSetting(
            "consumption-info", \.consumptionInfo, .flag,
            help: "Answer the App Store's consumption requests with what Kiosk knows of the delivery; setting it "
                + "states that customers consented, as Apple requires (needs the App Store Server API)."),
        ServerSetting(
            "refund-preference", \.refundPreference, .oneOf,
            help: "The refund consumption answers ask for: none (not stated), decline, grant_full or grant_prorated "
                + "(not stated when no consumption is known)."),
        ServerSetting(
            "sample-content-provided", \.sampleContentProvided, .flag,
            help: "Tell the App Store, in consumption answers, that a free sample or trial was offered before purchase."
        ),
        ServerSetting(
            "transaction-environments", \.transactionEnvironments, .environments,
            help: "Comma-separated App Store environments whose receipts and signed transactions are accepted.",
            unset: "Sandbox with --store sandbox, Production,Sandbox with appstore"),
        ServerSetting(
            "max-installations", \.maxInstallations, .integer(1...Int.max),
            help: "The most installations (installation_id) one purchase serves grants to."),
        ServerSetting(
            "max-installation-removals", \.maxInstallationRemovals, .integer(0...Int.max),
            help: "The most installations one purchase may remove in any --installation-removal-window (0: none)."),
        ServerSetting(
            "installation-removal-window", \.installationRemovalWindow, .seconds(minimum: 1),
            help: "Seconds of the rolling window --max-installation-removals counts removals in."),
        ServerSetting(
            "grant-lifetime", \.grantLifetime, .seconds(minimum: 1), help: "Seconds a grant token opens content."),
        ServerSetting(
            "reload-interval", \.reloadInterval, .seconds(minimum: 0),
            help: "Seconds between checks of the content folder (0: only on SIGHUP)."),
        ServerSetting(
            "apple-root-ca", \.appleRootCAFile, .path,
            help: "A PEM file of the root certificate(s) signed transactions must chain to.",
            unset: "Apple Root CA - G3"),
        ServerSetting(
            "idle-timeout", \.idleTimeout, .seconds(minimum: 1),
            help: "Seconds a connection may sit without a complete request part."),
        ServerSetting(
            "request-timeout", \.requestReadTimeout, .seconds(minimum: 1),
            help: "Seconds a client may take to send one whole request."),
        ServerSetting(
            "send-timeout", \.sendTimeout, .seconds(minimum: 1),
            help: "Seconds a client may leave up to 4 MiB of a response unread."),
        ServerSetting(
            "shutdown-grace", \.shutdownGrace, .seconds(minimum: 0),
            help: "Seconds a graceful shutdown (SIGTERM) lets responses in flight finish before cutting them."),
        ServerSetting(
            "max-header-size", \.maxHeaderSize, .integer(1024...Int.max), help: "The largest request head in bytes."),
        ServerSetting(
            "faults", \.faults, .faults,
            help: "Inject faults into content responses: a profile (none, allow, chaos[:P], slow, flaky, busy) "
                + "or a spec.",
            unset: "off"),
        ServerSetting(
            "faults-seed", \.faultsSeed, .unsigned,
            help: "Seed of the fault injector's random choices, for repeatable runs.", unset: "random"),
        ServerSetting(
            "offload", \.offload, .offload,
            help: "nginx:PREFIX: nginx in front sends admitted content files, from its internal location PREFIX "
                + "(deploy/nginx/kiosk-offload.conf); s3:BUCKET[/PREFIX]: grants carry presigned URLs of the "
                + "objects kiosk content push uploaded there.",
            unset: "off"),
        ServerSetting(
            "s3-endpoint", \.s3Endpoint, .storeURL,
            help: "The store of --offload s3: its endpoint URL.", unset: "https://s3.<region>.amazonaws.com"),
        ServerSetting("s3-region", \.s3Region, .text, help: "The region the store's URLs are signed for."),
        ServerSetting(
            "s3-addressing", \.s3Addressing, .addressing,
            help: "path (https://host/bucket/key, any store) or virtual (https://bucket.host/key)."),
        ServerSetting(
            "offload-url-lifetime", \.offloadURLLifetime, .seconds(minimum: 2),
            help: "Seconds a presigned URL of --offload s3 opens its object (at most 604800)."),
        ServerSetting(
            "s3-access-key-id", \.s3AccessKeyID, .text, help: "The access key ID that signs the store's URLs.",
            hasOption: false, variable: "AWS_ACCESS_KEY_ID"),
        ServerSetting(
            "s3-secret-access-key", \.s3SecretAccessKey, .text, help: "Its secret.", hasOption: false,
            variable: "AWS_SECRET_ACCESS_KEY"),
        ServerSetting(
            "s3-session-token", \.s3SessionToken, .text, help: "The session token of temporary credentials.",
            hasOption: false, variable: "AWS_SESSION_TOKEN"),
        ServerSetting(
            "shared-secret", \.sharedSecret, .text, help: "The app-specific shared secret sent to verifyReceipt.",
            hasOption: false),
        ServerSetting(
            "grant-secret", \.grantSecret, .text,
            help: "The grant signing secret (at least 32 bytes); without it a key is generated into the data folder.",
            hasOption: false, unset: "generated"),
        ServerSetting(
            "grant-key-id", \.grantKeyID, .text, help: "The key ID announced with the grant secret.", hasOption: false),
        ServerSetting(
            "grant-previous-keys", \.previousGrantKeys, .text,
            help: "id:secret,… earlier grant secrets still accepted during a key rotation.", hasOption: false),
    ]

    /// The setting named `name`; a programming error when there is none.
    public static func named(_ name: String) -> ServerSetting {
        guard let setting = all.first(where: { $0.name == name }) else { preconditionFailure("no setting '\(name)'") }
        return setting
    }
}

extension ServerConfiguration {
    /// The configuration `kiosk serve` runs with: each setting from `options` (by name, e.g. `max-installations`),
    /// else from `environment`, else its default; then checked as a whole with ``validate()``.
    /// - Throws: ``ServerConfigurationError`` naming the option or variable at fault.
    public init(options: [String: String], environment: [String: String]) throws(ServerConfigurationError) {
        var configuration = ServerConfiguration()
        for setting in ServerSetting.all {
            if setting.hasOption, let value = options[setting.name] {
                try setting.apply(value, from: setting.option, to: &configuration)
            } else if let value = environment[setting.environmentVariable], !value.isEmpty {
                try setting.apply(value, from: setting.environmentVariable, to: &configuration)
            }
        }
        try configuration.validate()
        self = configuration
    }
}
