import ArgumentParser
import Foundation
import KioskServer
import Logging

/// `kiosk serve`: run the server.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Kiosk server.",
        discussion: """
            Serves the catalog and content in --content, verifies receipts with the store and streams purchased \
            files. With the default --store sandbox it also runs the sandbox store (/sandbox/…), which sells \
            everything for free: it listens only on loopback addresses unless --allow-public-sandbox. Prints \
            "Kiosk listening on http://HOST:PORT" on standard output once it accepts connections; logs go to \
            standard error. SIGTERM or SIGINT shut it down gracefully; SIGHUP reloads the content.

            Every option can also come from the environment: KIOSK_ and the option's name in capitals, with _ for - \
            (KIOSK_MAX_INSTALLATIONS for --max-installations; 1 or true for a switch). An option given on the command \
            line wins over the environment, which wins over the default.

            Secrets come from the environment only: KIOSK_SHARED_SECRET (the app's shared secret for verifyReceipt), \
            KIOSK_GRANT_SECRET (≥ 32 bytes; otherwise a key is generated into --data), KIOSK_GRANT_KEY_ID and \
            KIOSK_GRANT_PREVIOUS_KEYS (id:secret,… still accepted during a key rotation).

            The ledger and the sandbox store's purchases live in --database (KIOSK_DATABASE_URL): by default \
            kiosk.sqlite in --data, or sqlite:PATH, or postgres://user:password@host:port/database?sslmode=… for \
            several instances sharing one database. Its schema is migrated at start; a database written by a newer \
            release is refused. The password is never logged; prefer the variable to the option, which `ps` shows.

            With --store appstore, --bundle-id must be your app's (the example is refused), and the store URLs must \
            be https (http only to loopback). Redirects from the store are never followed.

            StoreKit 2 signed transactions and App Store Server Notifications (POST /v1/notifications/appstore) are \
            verified locally against Apple Root CA - G3, or the roots in --apple-root-ca; in sandbox mode the \
            sandbox store's own root is trusted too.

            Fault injection (for testing clients; refused with --store appstore): --faults takes a profile (none or \
            allow: only per-request faults; chaos or chaos:P; slow; flaky; busy) or a fault spec such as \
            "cut=65536;throttle=1MiB/s". With it, each content request may also ask for faults with the Kiosk-Fault \
            header or the fault query parameter. See docs/fault-injection.md.

            Offload (--offload nginx:PREFIX): nginx in front of Kiosk sends the content files Kiosk admits, from \
            its internal location PREFIX; packs, subchunks and the answers Kiosk must give itself (HEAD, several \
            ranges, 304, 412, 416, errors) stay with Kiosk. The nginx configuration is \
            deploy/nginx/kiosk-offload.conf. Refused with --faults.

            Offload (--offload s3:BUCKET[/PREFIX]): grants give every file a presigned URL of the object \
            `kiosk content push` uploaded there, living --offload-url-lifetime seconds, so that the store (or a CDN) \
            sends the bytes; the keys come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN. A \
            URL handed out opens its object until it expires, even after a refund. Refused with --faults.

            Examples:
              kiosk serve
              kiosk serve --port 0 --content ./content --data /var/lib/kiosk
              KIOSK_DATABASE_URL=postgres://kiosk:…@db.internal:5432/kiosk?sslmode=require kiosk serve
              KIOSK_SHARED_SECRET=… kiosk serve --store appstore --bundle-id com.acme.app
              KIOSK_STORE=appstore KIOSK_BUNDLE_ID=com.acme.app KIOSK_HOST=0.0.0.0 kiosk serve
              kiosk serve --host 0.0.0.0 --allow-public-sandbox   # a staging sandbox, on purpose
              kiosk serve --faults chaos:0.3 --faults-seed 42
              kiosk serve --faults none        # per-request faults only
              kiosk serve --offload nginx:/_kiosk/files   # behind deploy/nginx/kiosk-offload.conf
              AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=… kiosk serve --offload s3:acme-kiosk/content \
                --s3-endpoint https://s3.eu-west-1.amazonaws.com --s3-region eu-west-1
            """
    )

    @Option(name: .customLong("host"), help: help("host")) var host: String?
    @Option(name: .customLong("port"), help: help("port")) var port: String?
    @Option(name: .customLong("content"), help: help("content")) var content: String?
    @Option(name: .customLong("data"), help: help("data")) var data: String?
    @Option(name: .customLong("database"), help: help("database")) var database: String?
    @Option(name: .customLong("store"), help: help("store")) var store: String?
    @Option(name: .customLong("bundle-id"), help: help("bundle-id")) var bundleID: String?
    @Flag(name: .customLong("allow-public-sandbox"), help: help("allow-public-sandbox")) var allowPublicSandbox = false
    @Flag(name: .customLong("public-metrics"), help: help("public-metrics")) var publicMetrics = false
    @Option(name: .customLong("verify-url"), help: help("verify-url")) var verifyURL: String?
    @Option(name: .customLong("sandbox-verify-url"), help: help("sandbox-verify-url")) var sandboxVerifyURL: String?
    @Option(name: .customLong("transaction-environments"), help: help("transaction-environments"))
    var transactionEnvironments: String?
    @Option(name: .customLong("max-installations"), help: help("max-installations")) var maxInstallations: String?
    @Option(name: .customLong("max-installation-removals"), help: help("max-installation-removals"))
    var maxInstallationRemovals: String?
    @Option(name: .customLong("installation-removal-window"), help: help("installation-removal-window"))
    var installationRemovalWindow: String?
    @Option(name: .customLong("grant-lifetime"), help: help("grant-lifetime")) var grantLifetime: String?
    @Option(name: .customLong("reload-interval"), help: help("reload-interval")) var reloadInterval: String?
    @Option(name: .customLong("apple-root-ca"), help: help("apple-root-ca")) var appleRootCA: String?
    @Option(name: .customLong("idle-timeout"), help: help("idle-timeout")) var idleTimeout: String?
    @Option(name: .customLong("request-timeout"), help: help("request-timeout")) var requestTimeout: String?
    @Option(name: .customLong("send-timeout"), help: help("send-timeout")) var sendTimeout: String?
    @Option(name: .customLong("shutdown-grace"), help: help("shutdown-grace")) var shutdownGrace: String?
    @Option(name: .customLong("max-header-size"), help: help("max-header-size")) var maxHeaderSize: String?
    @Option(name: .customLong("faults"), help: help("faults")) var faults: String?
    @Option(name: .customLong("faults-seed"), help: help("faults-seed")) var faultsSeed: String?
    @Option(name: .customLong("offload"), help: help("offload")) var offload: String?
    @Option(name: .customLong("database-wait"), help: help("database-wait")) var databaseWait: String?
    @Option(name: .customLong("app-store-api-url"), help: help("app-store-api-url")) var appStoreAPIURL: String?
    @Option(name: .customLong("app-store-sandbox-api-url"), help: help("app-store-sandbox-api-url"))
    var appStoreSandboxAPIURL: String?
    @Option(name: .customLong("app-store-key-file"), help: help("app-store-key-file")) var appStoreKeyFile: String?
    @Option(name: .customLong("app-store-key-id"), help: help("app-store-key-id")) var appStoreKeyID: String?
    @Option(name: .customLong("app-store-issuer-id"), help: help("app-store-issuer-id")) var appStoreIssuerID: String?
    @Option(name: .customLong("transaction-refresh"), help: help("transaction-refresh")) var transactionRefresh: String?
    @Option(name: .customLong("notification-history-interval"), help: help("notification-history-interval"))
    var notificationHistoryInterval: String?
    @Option(name: .customLong("notification-history-days"), help: help("notification-history-days"))
    var notificationHistoryDays: String?
    @Option(name: .customLong("receipt-validation"), help: help("receipt-validation")) var receiptValidation: String?
    @Option(name: .customLong("receipt-local-testing-root"), help: help("receipt-local-testing-root"))
    var receiptLocalTestingRoot: String?
    @Flag(name: .customLong("consumption-info"), help: help("consumption-info")) var consumptionInfo = false
    @Option(name: .customLong("refund-preference"), help: help("refund-preference")) var refundPreference: String?
    @Flag(name: .customLong("sample-content-provided"), help: help("sample-content-provided"))
    var sampleContentProvided = false
    @Option(name: .customLong("s3-endpoint"), help: help("s3-endpoint")) var s3Endpoint: String?
    @Option(name: .customLong("s3-region"), help: help("s3-region")) var s3Region: String?
    @Option(name: .customLong("s3-addressing"), help: help("s3-addressing")) var s3Addressing: String?
    @Option(name: .customLong("offload-url-lifetime"), help: help("offload-url-lifetime"))
    var offloadURLLifetime: String?
    @Option(
        name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (env: LOG_LEVEL)."
    )
    var logLevel: String = ProcessInfo.processInfo.environment["LOG_LEVEL"] ?? "info"

    /// The `--help` line of a setting: what it does, its default and its environment variable.
    private static func help(_ name: String) -> ArgumentHelp {
        let setting = ServerSetting.named(name)
        return ArgumentHelp(
            "\(setting.help) (default: \(setting.defaultDescription); env: \(setting.environmentVariable))")
    }

    /// The options given on the command line, by setting name.
    private var options: [String: String] {
        let given: [(String, String?)] = [
            ("host", host), ("port", port), ("content", content), ("data", data), ("database", database),
            ("store", store),
            ("bundle-id", bundleID), ("allow-public-sandbox", allowPublicSandbox ? "true" : nil),
            ("public-metrics", publicMetrics ? "true" : nil), ("verify-url", verifyURL),
            ("sandbox-verify-url", sandboxVerifyURL), ("transaction-environments", transactionEnvironments),
            ("max-installations", maxInstallations), ("max-installation-removals", maxInstallationRemovals),
            ("installation-removal-window", installationRemovalWindow), ("grant-lifetime", grantLifetime),
            ("reload-interval", reloadInterval), ("apple-root-ca", appleRootCA), ("idle-timeout", idleTimeout),
            ("request-timeout", requestTimeout), ("send-timeout", sendTimeout), ("shutdown-grace", shutdownGrace),
            ("max-header-size", maxHeaderSize),
            ("faults", faults), ("faults-seed", faultsSeed), ("offload", offload), ("s3-endpoint", s3Endpoint),
            ("s3-region", s3Region), ("s3-addressing", s3Addressing), ("offload-url-lifetime", offloadURLLifetime),
            ("database-wait", databaseWait), ("app-store-api-url", appStoreAPIURL),
            ("app-store-sandbox-api-url", appStoreSandboxAPIURL), ("app-store-key-file", appStoreKeyFile),
            ("app-store-key-id", appStoreKeyID), ("app-store-issuer-id", appStoreIssuerID),
            ("transaction-refresh", transactionRefresh), ("notification-history-interval", notificationHistoryInterval),
            ("notification-history-days", notificationHistoryDays), ("receipt-validation", receiptValidation),
            ("receipt-local-testing-root", receiptLocalTestingRoot),
            ("consumption-info", consumptionInfo ? "true" : nil), ("refund-preference", refundPreference),
            ("sample-content-provided", sampleContentProvided ? "true" : nil),
        ]
        return Dictionary(uniqueKeysWithValues: given.compactMap { name, value in value.map { (name, $0) } })
    }

    /// The configuration from the options, the environment and the defaults, checked.
    private func resolvedConfiguration() throws -> ServerConfiguration {
        do {
            return try ServerConfiguration(options: options, environment: ProcessInfo.processInfo.environment)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func validate() throws {
        _ = try StandardErrorLogging.level(logLevel)
        _ = try resolvedConfiguration()
    }

    func run() async throws {
        StandardErrorLogging.bootstrap(level: try StandardErrorLogging.level(logLevel))
        let logger = Logger(label: "kiosk")
        let server = try await KioskHTTPServer(configuration: try resolvedConfiguration(), logger: logger)
        try await server.run(gracefulShutdownSignals: [.sigterm, .sigint], reloadOnSIGHUP: true) { address, _ in
            // Unbuffered, so that a script reading the pipe sees the line at once.
            FileHandle.standardOutput.write(Data("Kiosk listening on \(address)\n".utf8))
        }
    }
}
