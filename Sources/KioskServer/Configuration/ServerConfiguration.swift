import Foundation
import KioskCore
import KioskStore

/// Which store verifies receipts.
public enum StoreMode: String, Sendable, CaseIterable, Codable {
    /// The built-in sandbox store: issues receipts and answers `verifyReceipt` itself (the default).
    case sandbox
    /// Apple's App Store `verifyReceipt` endpoints (or any server that speaks that contract).
    case appstore
}

/// How app receipts (`receipt-data`) are verified.
public enum ReceiptValidation: String, Sendable, CaseIterable, Codable {
    /// Sent to the store's `verifyReceipt` (Apple's, deprecated, or the sandbox store's): the default.
    case verifyReceipt = "verify-receipt"
    /// Read and verified locally (PKCS#7 signature, chain to Apple's root), then kept fresh by the App Store Server
    /// API. Only App Store receipts: not the sandbox store's own.
    case api
}

/// Everything the server needs to run. The defaults are the embedded configuration: content from `./content`, the
/// sandbox store on loopback, a SQLite ledger and a generated signing key in `./.kiosk`. Each property's initial
/// value is its default; ``ServerSetting/all`` reads the settings from options and the environment.
public struct ServerConfiguration: Sendable {
    /// The sample app's bundle ID, the default: refused with the App Store, where it must be the real app's.
    public static let exampleBundleID = "com.example.kiosk"

    /// Where the server reads the current time on the request path (the system clock; tests inject a
    /// ``ManualClock``). Not a command-line option.
    public var clock: any ServerClock = SystemClock()
    /// The address to bind. With the sandbox store only a loopback address, unless ``allowPublicSandbox``.
    public var host: String = "127.0.0.1"
    /// The port to bind; 0 binds an ephemeral port.
    public var port: Int = 8080
    /// The folder holding `<product_id>/Info.json` and `<product_id>/Contents/…`.
    public var contentDirectory: URL = URL(fileURLWithPath: "content")
    /// The folder for the ledger, the hash cache and generated keys.
    public var dataDirectory: URL = URL(fileURLWithPath: ".kiosk")
    /// The database of the ledger and the sandbox store; nil keeps them in `kiosk.sqlite` in ``dataDirectory``
    /// (see ``databaseURL``).
    public var database: DatabaseURL?
    /// How long a request waits for a PostgreSQL connection before it is refused with 503 `database_unavailable`.
    public var databaseWait: Duration = KioskDatabase.defaultConnectionWait
    /// Which store verifies receipts.
    public var store: StoreMode = .sandbox
    /// The app's bundle ID: receipts for another app are refused. The App Store needs the real one.
    public var bundleID: String = ServerConfiguration.exampleBundleID
    /// Whether the sandbox store, which sells everything for free, may listen on a non-loopback address (a warning
    /// is logged at every start when it does).
    public var allowPublicSandbox = false
    /// Whether `/metrics` is served to every client; by default only to loopback ones.
    public var publicMetrics = false
    /// The production `verifyReceipt` URL (used with `--store appstore`): `https`, or `http` to a loopback address.
    public var productionVerifyURL: URL = ReceiptVerifier.appleProductionURL
    /// The sandbox `verifyReceipt` URL (used with `--store appstore`): `https`, or `http` to a loopback address.
    public var sandboxVerifyURL: URL = ReceiptVerifier.appleSandboxURL
    /// The production App Store Server API (`--app-store-api-url`): `https`, or `http` to a loopback address; a path
    /// in it prefixes every request's. Unset: Apple's, or with `--store sandbox` the sandbox store's own, in process.
    public var appStoreAPIURL: URL?
    /// The sandbox App Store Server API (`--app-store-sandbox-api-url`); unset as ``appStoreAPIURL``.
    public var appStoreSandboxAPIURL: URL?
    /// The `.p8` file of the in-app purchase key that signs App Store Server API requests.
    public var appStoreKeyFile: URL?
    /// The key itself, its PEM text (`KIOSK_APP_STORE_KEY`, from the environment only); the key file wins. Never
    /// logged.
    public var appStoreKey: String?
    /// The key's ID in App Store Connect.
    public var appStoreKeyID: String?
    /// The team's issuer ID in App Store Connect.
    public var appStoreIssuerID: String?
    /// How long the App Store Server API's confirmation of a transaction holds before a grant looks it up again
    /// (`--transaction-refresh`); zero looks up at every grant.
    public var transactionRefresh: Duration = .seconds(86_400)
    /// How often the notification history is read to catch up on missed notifications
    /// (`--notification-history-interval`); zero turns it off.
    public var notificationHistoryInterval: Duration = .seconds(3600)
    /// How app receipts are verified (`--receipt-validation`).
    public var receiptValidation: ReceiptValidation = .verifyReceipt
    /// A certificate (PEM) that Xcode's StoreKit-testing receipts are accepted from, with `--receipt-validation api`
    /// (`--receipt-local-testing-root`); none by default: Xcode receipts are refused.
    public var receiptLocalTestingRoot: URL?
    /// How many days back the very first catch-up starts (`--notification-history-days`, at most 180: Apple's limit).
    public var notificationHistoryDays = 30
    /// Whether `CONSUMPTION_REQUEST` notifications are answered with what Kiosk knows of the purchase's delivery
    /// (`--consumption-info`): setting it states that customers consented to sending it, as Apple requires. Off: a
    /// consumption request is logged and left unanswered.
    public var consumptionInfo = false
    /// The refund the consumption answers ask Apple for (`--refund-preference`); ``ConsumptionRefundPreference/none``
    /// states none.
    public var refundPreference: ConsumptionRefundPreference = .none
    /// Whether the consumption answers say a free sample or trial of the content was offered before the purchase
    /// (`--sample-content-provided`).
    public var sampleContentProvided = false
    /// The app-specific shared secret sent as `password` (from `KIOSK_SHARED_SECRET`). Never logged.
    public var sharedSecret: String?
    /// The grant signing secret (from `KIOSK_GRANT_SECRET`); when nil a key is generated into the data directory.
    public var grantSecret: String?
    /// The key ID announced with `grantSecret` (from `KIOSK_GRANT_KEY_ID`), so keys can rotate.
    public var grantKeyID: String = "env"
    /// Earlier grant secrets still accepted while their tokens live, as `id:secret,id:secret`
    /// (from `KIOSK_GRANT_PREVIOUS_KEYS`).
    public var previousGrantKeys: String?
    /// How long a grant token opens content.
    public var grantLifetime: Duration = .seconds(15 * 60)
    /// How long a verified receipt is answered from the cache.
    public var receiptCacheTTL: Duration = .seconds(60)
    /// How long one call to the store may take.
    public var storeTimeout: Duration = .seconds(15)
    /// How often the content folder is checked for changes (0 disables; SIGHUP always reloads).
    public var reloadInterval: Duration = .seconds(10)
    /// The most ranges one `Range` header may ask for before the server answers the whole file.
    public var maxRangesPerRequest: Int = 16
    /// The size of the chunks read from disk and written to the socket.
    public var streamChunkSize: Int = 256 * 1024
    /// The largest request body accepted on JSON endpoints other than receipts (receipts allow 3 MiB + envelope).
    public var maxJSONBodySize: Int = 64 * 1024
    /// How long a connection may sit without a complete request part (a request head, a body chunk) while no
    /// response is being written; a client dripping header bytes is closed after this long.
    public var idleTimeout: Duration = .seconds(60)
    /// How long a client may take to send one whole request, from its head to the end of its body (a body dripped
    /// slowly, or one the server refused and would otherwise read to its end).
    public var requestReadTimeout: Duration = .seconds(30)
    /// How long one piece of a response (up to 4 MiB) may wait for a client that does not read before the
    /// connection is closed.
    public var sendTimeout: Duration = .seconds(60)
    /// How long a graceful shutdown (`SIGTERM`, `SIGINT`, ``ServerShutdown``) lets the responses in flight finish
    /// once the server has stopped accepting connections; those still running then are cut.
    public var shutdownGrace: Duration = .seconds(30)
    /// The largest request head accepted: one header field, and all of them together (larger: 400 and close).
    public var maxHeaderSize: Int = 32 * 1024
    /// The most header fields one request may carry.
    public var maxHeaderCount: Int = 100
    /// Fault injection into content responses (see docs/fault-injection.md); nil, the default, disables it and
    /// the server ignores every per-request fault spec. Refused with the App Store.
    public var faults: FaultProfile?
    /// The seed of the fault injector's random choices, for repeatable runs (random when nil).
    public var faultsSeed: UInt64?
    /// Who sends the bytes of admitted content files: nil, the default, Kiosk itself; `nginx:PREFIX`, nginx in front
    /// of Kiosk (see docs/operations.md, "Offloading downloads to nginx"); `s3:BUCKET[/PREFIX]`, an S3-compatible
    /// store, through presigned URLs in grants (see docs/operations.md, "Offloading downloads to object storage").
    /// Refused with ``faults``.
    public var offload: ContentOffload?
    /// The endpoint of the store of `--offload s3:…`; nil, the default, is AWS's in ``s3Region``
    /// (`https://s3.<region>.amazonaws.com`). A path in it prefixes every object's path.
    public var s3Endpoint: URL?
    /// The region requests to the store are signed for.
    public var s3Region = "us-east-1"
    /// Where the bucket's name goes in the store's URLs: `path` (any S3-compatible store) or `virtual` (AWS).
    public var s3Addressing: S3Location.AddressingStyle = .path
    /// How long a presigned URL of `--offload s3:…` opens its object (a grant's URLs have at least half of it left).
    public var offloadURLLifetime: Duration = S3ContentOffload.defaultURLLifetime
    /// The access key ID that signs the store's URLs (`AWS_ACCESS_KEY_ID`; from the environment only).
    public var s3AccessKeyID: String?
    /// Its secret (`AWS_SECRET_ACCESS_KEY`; from the environment only, never logged).
    public var s3SecretAccessKey: String?
    /// The session token of temporary credentials (`AWS_SESSION_TOKEN`; from the environment only, never logged).
    public var s3SessionToken: String?

    /// A PEM file of the root certificate(s) signed transactions and notifications must chain to; nil trusts Apple
    /// Root CA - G3. (In sandbox mode the sandbox store's own root is trusted as well.)
    public var appleRootCAFile: URL?
    /// The App Store environments (`Production`, `Sandbox`) whose receipts, signed transactions and notifications
    /// are accepted; nil means `Sandbox` with the sandbox store and `Production` and `Sandbox` with the App Store
    /// (App Review buys with sandbox accounts against production servers).
    public var transactionEnvironments: Set<String>?
    /// The most installations (distinct `installation_id`s) one purchase may serve grants to; grant requests must
    /// name their installation.
    public var maxInstallations: Int = 10
    /// The most installations one purchase may remove (`POST /v1/installations/remove`) in any
    /// ``installationRemovalWindow``; 0 allows none.
    public var maxInstallationRemovals: Int = 3
    /// The rolling window ``maxInstallationRemovals`` counts removals in.
    public var installationRemovalWindow: Duration = .seconds(30 * 86_400)

    /// ``maxInstallationRemovals`` in ``installationRemovalWindow``.
    public var installationRemovalLimit: RemovalLimit {
        RemovalLimit(removals: maxInstallationRemovals, window: installationRemovalWindow)
    }

    /// The environments accepted, with the store mode's default when ``transactionEnvironments`` is nil.
    public var acceptedTransactionEnvironments: Set<String> {
        transactionEnvironments ?? (store == .sandbox ? ["Sandbox"] : ["Production", "Sandbox"])
    }

    /// ``acceptedTransactionEnvironments`` as store environments (unknown names are dropped; ``validate()`` refuses
    /// them).
    public var acceptedStoreEnvironments: Set<StoreEnvironment> {
        Set(acceptedTransactionEnvironments.compactMap { StoreEnvironment(rawValue: $0) })
    }

    /// The database the server opens: ``database``, or by default `kiosk.sqlite` in ``dataDirectory``.
    public var databaseURL: DatabaseURL {
        database ?? .sqlite(path: dataDirectory.appendingPathComponent("kiosk.sqlite").path)
    }

    /// Whether the sandbox store would listen on an address other machines can reach.
    var exposesSandbox: Bool { store == .sandbox && !LoopbackAddress.contains(host) }

    /// Whether `url` may receive receipts and the shared secret: `https`, or `http` to a loopback address only.
    static func isAcceptableStoreURL(_ url: URL) -> Bool {
        guard let host = url.host, !host.isEmpty else { return false }
        switch url.scheme?.lowercased() {
        case "https": return true
        case "http": return LoopbackAddress.contains(host)
        default: return false
        }
    }

    /// Creates the default (embedded) configuration.
    public init() {}

    /// The key that signs App Store Server API requests, from the key file (or the inline key), the key ID, the
    /// issuer ID and the bundle ID; nil when none of the three is given (the API is then off).
    /// - Throws: ``ServerConfigurationError`` naming what is missing or unreadable (never the key's text).
    public func appStoreAPIKey() throws(ServerConfigurationError) -> AppStoreAPIKey? {
        let given = (key: appStoreKeyFile != nil || appStoreKey != nil, id: appStoreKeyID, issuer: appStoreIssuerID)
        guard given.key || given.id != nil || given.issuer != nil else { return nil }
        let missing = [
            given.key ? nil : "--app-store-key-file (or KIOSK_APP_STORE_KEY)",
            given.id == nil ? "--app-store-key-id" : nil, given.issuer == nil ? "--app-store-issuer-id" : nil,
        ].compactMap { $0 }
        guard missing.isEmpty, let keyID = given.id, let issuerID = given.issuer else {
            throw ServerConfigurationError(
                "The App Store Server API needs its key, key ID and issuer ID together; missing: "
                    + missing.joined(separator: ", ") + " (App Store Connect: Users and Access, Integrations, "
                    + "In-App Purchase).")
        }
        let pem: String
        if let file = appStoreKeyFile {
            guard let text = try? String(contentsOf: file, encoding: .utf8) else {
                throw ServerConfigurationError("--app-store-key-file \(file.path) cannot be read.")
            }
            pem = text
        } else {
            pem = appStoreKey ?? ""
        }
        do {
            return try AppStoreAPIKey(pem: pem, keyID: keyID, issuerID: issuerID, bundleID: bundleID)
        } catch {
            throw ServerConfigurationError("The App Store Server API key: \(error).")
        }
    }

    /// The offload to an S3-compatible store that `--offload s3:…` and the `--s3-…` settings describe; nil without
    /// `--offload s3:…`.
    public func s3ContentOffload() throws(ServerConfigurationError) -> S3ContentOffload? {
        guard case .s3(let bucket, let prefix) = offload else { return nil }
        guard let keyID = s3AccessKeyID, let secret = s3SecretAccessKey else {
            throw ServerConfigurationError(
                "--offload s3:… signs URLs with the store's keys: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                    + "(and AWS_SESSION_TOKEN for temporary credentials) in the environment.")
        }
        let endpoint = s3Endpoint ?? URL(string: "https://s3.\(s3Region).amazonaws.com")
        do {
            guard let endpoint else { throw S3SigningError.invalidEndpoint }
            let location = try S3Location(
                endpoint: endpoint, region: s3Region, bucket: bucket, addressingStyle: s3Addressing)
            let credentials = S3Credentials(accessKeyID: keyID, secretAccessKey: secret, sessionToken: s3SessionToken)
            return try S3ContentOffload(
                signer: SigV4Signer(location: location, credentials: credentials), prefix: prefix,
                urlLifetime: offloadURLLifetime)
        } catch {
            throw ServerConfigurationError("--offload \(offload?.description ?? ""): \(error).")
        }
    }

    /// Checks the settings that only make sense together.
    /// - Throws: ``ServerConfigurationError`` describing the first problem found.
    public func validate() throws(ServerConfigurationError) {
        if exposesSandbox, !allowPublicSandbox {
            throw ServerConfigurationError(
                "The sandbox store sells everything for free, so it listens only on loopback addresses, not '\(host)'. "
                    + "Use --store appstore for real purchases, or add --allow-public-sandbox "
                    + "(KIOSK_ALLOW_PUBLIC_SANDBOX=1) to expose it on purpose.")
        }
        if store == .appstore, bundleID == Self.exampleBundleID || bundleID.isEmpty {
            throw ServerConfigurationError(
                "With --store appstore, set --bundle-id (KIOSK_BUNDLE_ID) to your app's bundle ID: the example "
                    + "'\(Self.exampleBundleID)' matches no real receipt.")
        }
        if let names = transactionEnvironments, names.isEmpty || acceptedStoreEnvironments.count != names.count {
            throw ServerConfigurationError(
                "--transaction-environments must name Production, Sandbox or both: with none, no receipt or signed "
                    + "transaction could be accepted.")
        }
        for (name, url) in [("--verify-url", productionVerifyURL), ("--sandbox-verify-url", sandboxVerifyURL)]
        where !Self.isAcceptableStoreURL(url) {
            throw ServerConfigurationError(
                "\(name) '\(url.absoluteString.prefix(200))' must be an https URL (http only to a loopback address): "
                    + "receipts and the shared secret travel to it.")
        }
        if faultsSeed != nil, faults == nil {
            throw ServerConfigurationError("--faults-seed needs --faults.")
        }
        if faults != nil, offload != nil {
            throw ServerConfigurationError(
                "--faults cannot be used with --offload: nginx or the store sends the files and cannot inject faults. "
                    + "Remove one.")
        }
        _ = try s3ContentOffload()
        _ = try appStoreAPIKey()
        for case (let name, let url?) in [
            ("--app-store-api-url", appStoreAPIURL), ("--app-store-sandbox-api-url", appStoreSandboxAPIURL),
        ]
        where !Self.isAcceptableStoreURL(url) {
            throw ServerConfigurationError(
                "\(name) '\(url.absoluteString.prefix(200))' must be an https URL (http only to a loopback address): "
                    + "the API's bearer tokens travel to it.")
        }
        if receiptValidation == .api, store == .sandbox {
            throw ServerConfigurationError(
                "--receipt-validation api reads App Store receipts; the sandbox store's receipts are its own. Use it "
                    + "with --store appstore.")
        }
        if receiptLocalTestingRoot != nil, receiptValidation != .api {
            throw ServerConfigurationError("--receipt-local-testing-root needs --receipt-validation api.")
        }
        if faults != nil, store == .appstore {
            throw ServerConfigurationError(
                "Fault injection cannot run with the App Store: it would break real purchases. Remove --faults, or "
                    + "use --store sandbox.")
        }
        for (name, value) in [
            ("idle timeout", idleTimeout), ("request read timeout", requestReadTimeout), ("send timeout", sendTimeout),
        ] where value <= .zero {
            throw ServerConfigurationError("The \(name) must be positive.")
        }
        guard shutdownGrace >= .zero else { throw ServerConfigurationError("The shutdown grace must not be negative.") }
        guard maxHeaderSize >= 1024 else {
            throw ServerConfigurationError("The header size limit must be at least 1024.")
        }
        guard maxHeaderCount >= 8 else { throw ServerConfigurationError("The header count limit must be at least 8.") }
        guard maxInstallations > 0 else { throw ServerConfigurationError("--max-installations must be positive.") }
        guard maxInstallationRemovals >= 0 else {
            throw ServerConfigurationError("--max-installation-removals must not be negative.")
        }
        guard installationRemovalWindow > .zero else {
            throw ServerConfigurationError("--installation-removal-window must be positive.")
        }
        guard grantLifetime > .zero else { throw ServerConfigurationError("--grant-lifetime must be positive.") }
    }
}

/// A configuration the server refuses to start with.
public struct ServerConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong and what to do.
    public let description: String

    init(_ description: String) { self.description = description }
}
