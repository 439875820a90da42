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
            files. With the default --store sandbox it also runs the sandbox store (/sandbox/…), so everything works \
            offline. Prints "Kiosk listening on http://HOST:PORT" on standard output once it accepts connections; \
            logs go to standard error. SIGTERM or SIGINT shut it down gracefully; SIGHUP reloads the content.

            Secrets come from the environment: KIOSK_SHARED_SECRET (the app's shared secret for verifyReceipt), \
            KIOSK_GRANT_SECRET (≥ 32 bytes; otherwise a key is generated into --data), KIOSK_GRANT_KEY_ID and \
            KIOSK_GRANT_PREVIOUS_KEYS (id:secret,… still accepted during a key rotation).

            StoreKit 2 signed transactions and App Store Server Notifications (POST /v1/notifications/appstore) are \
            verified locally against Apple Root CA - G3, or the roots in --apple-root-ca; in sandbox mode the \
            sandbox store's own root is trusted too.

            Fault injection (for testing clients; refused with --store appstore): --faults takes a profile (none or \
            allow: only per-request faults; chaos or chaos:P; slow; flaky; busy) or a fault spec such as \
            "cut=65536;throttle=1MiB/s". With it, each content request may also ask for faults with the Kiosk-Fault \
            header or the fault query parameter. See the README, "Fault injection".

            Examples:
              kiosk serve
              kiosk serve --port 0 --content ./content --data /var/lib/kiosk
              KIOSK_SHARED_SECRET=… kiosk serve --store appstore --bundle-id com.example.app
              kiosk serve --store appstore --transaction-environments Production --max-installations 5
              kiosk serve --faults chaos:0.3 --faults-seed 42
              kiosk serve --faults none        # per-request faults only
            """
    )

    @Option(help: "The address to bind.") var host = "127.0.0.1"
    @Option(help: "The port to bind; 0 picks a free one.") var port = 8080
    @Option(help: "The content folder (<product_id>/Info.json + Contents/).") var content = "./content"
    @Option(help: "The data folder: ledger, hash cache, keys.") var data = "./.kiosk"
    @Option(help: "Which store verifies receipts: sandbox or appstore.") var store: StoreMode = .sandbox
    @Option(name: .customLong("bundle-id"), help: "The app's bundle ID; receipts of other apps are refused.")
    var bundleID = "com.example.kiosk"
    @Option(name: .customLong("verify-url"), help: "The production verifyReceipt URL (appstore mode).")
    var verifyURL = "https://buy.itunes.apple.com/verifyReceipt"
    @Option(name: .customLong("sandbox-verify-url"), help: "The sandbox verifyReceipt URL (appstore mode).")
    var sandboxVerifyURL = "https://sandbox.itunes.apple.com/verifyReceipt"
    @Option(name: .customLong("grant-lifetime"), help: "Seconds a grant token opens content.")
    var grantLifetime = 900
    @Option(name: .customLong("reload-interval"), help: "Seconds between checks of the content folder (0: only on SIGHUP).")
    var reloadInterval = 10
    @Option(
        name: .customLong("apple-root-ca"),
        help: "A PEM file of the root certificate(s) signed transactions must chain to (default: Apple Root CA - G3).")
    var appleRootCA: String?
    @Option(
        name: .customLong("transaction-environments"),
        help: "Comma-separated StoreKit environments accepted (default: Sandbox with --store sandbox, else both).")
    var transactionEnvironments: String?
    @Option(
        name: .customLong("max-installations"),
        help: "The most installations (installation_id) one purchase serves grants to.")
    var maxInstallations = 10
    @Option(name: .customLong("idle-timeout"), help: "Seconds a connection may sit without a complete request part.")
    var idleTimeout = 60
    @Option(name: .customLong("request-timeout"), help: "Seconds a client may take to send one whole request.")
    var requestTimeout = 30
    @Option(name: .customLong("send-timeout"), help: "Seconds a client may leave up to 4 MiB of a response unread.")
    var sendTimeout = 60
    @Option(name: .customLong("max-header-size"), help: "The largest request head in bytes.")
    var maxHeaderSize = 32 * 1024
    @Option(help: "Inject faults into content responses: a profile (none, allow, chaos[:P], slow, flaky, busy) or a spec.")
    var faults: String?
    @Option(name: .customLong("faults-seed"), help: "Seed of the fault injector's random choices, for repeatable runs.")
    var faultsSeed: UInt64?
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = ProcessInfo.processInfo.environment["LOG_LEVEL"] ?? "info"

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535.") }
        guard grantLifetime > 0 else { throw ValidationError("--grant-lifetime must be positive.") }
        guard maxInstallations > 0 else { throw ValidationError("--max-installations must be positive.") }
        if let list = transactionEnvironments {
            let names = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            for name in names where !["Production", "Sandbox"].contains(name) {
                throw ValidationError("Unknown environment '\(name)' in --transaction-environments (Production, Sandbox).")
            }
        }
        guard reloadInterval >= 0 else { throw ValidationError("--reload-interval must be 0 or more.") }
        guard idleTimeout > 0, requestTimeout > 0, sendTimeout > 0 else {
            throw ValidationError("--idle-timeout, --request-timeout and --send-timeout must be positive.")
        }
        if let faults {
            guard store == .sandbox else {
                throw ValidationError(
                    "--faults cannot be used with --store appstore: fault injection would break real purchases.")
            }
            do {
                _ = try FaultProfile(parsing: faults)
            } catch {
                throw ValidationError("--faults: \(error).")
            }
        } else if faultsSeed != nil {
            throw ValidationError("--faults-seed needs --faults.")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("Unknown --log-level '\(logLevel)'.") }
        for url in [verifyURL, sandboxVerifyURL] {
            guard let parsed = URL(string: url), parsed.scheme == "https" || parsed.scheme == "http", parsed.host != nil
            else { throw ValidationError("'\(url)' is not an http(s) URL.") }
        }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "kiosk")
        var configuration = ServerConfiguration()
        configuration.host = host
        configuration.port = port
        configuration.contentDirectory = URL(fileURLWithPath: content)
        configuration.dataDirectory = URL(fileURLWithPath: data)
        configuration.store = store
        configuration.bundleID = bundleID
        configuration.productionVerifyURL = URL(string: verifyURL)!
        configuration.sandboxVerifyURL = URL(string: sandboxVerifyURL)!
        configuration.grantLifetime = .seconds(grantLifetime)
        configuration.reloadInterval = .seconds(reloadInterval)
        configuration.maxInstallations = maxInstallations
        configuration.appleRootCAFile = appleRootCA.map { URL(fileURLWithPath: $0) }
        configuration.transactionEnvironments = transactionEnvironments.map {
            Set($0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        }
        configuration.idleTimeout = .seconds(idleTimeout)
        configuration.requestReadTimeout = .seconds(requestTimeout)
        configuration.sendTimeout = .seconds(sendTimeout)
        configuration.maxHeaderSize = maxHeaderSize
        configuration.faults = try faults.map { try FaultProfile(parsing: $0) }
        configuration.faultsSeed = faultsSeed
        configuration.applyEnvironment()

        let server = try await KioskHTTPServer(configuration: configuration, logger: logger)
        try await server.run(gracefulShutdownSignals: [.sigterm, .sigint], reloadOnSIGHUP: true) { address, _ in
            // Unbuffered, so that a script reading the pipe sees the line at once.
            FileHandle.standardOutput.write(Data("Kiosk listening on \(address)\n".utf8))
        }
    }
}

extension StoreMode: ExpressibleByArgument {}
