import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdCore
import KioskCore
import KioskStore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import SwiftASN1
import UnixSignals
import X509

/// The Kiosk server: the catalog, the receipt-gated grants and the range-exact content streams of API.md, with
/// the sandbox store when configured, all over one Hummingbird application.
///
/// ```swift
/// let server = try await KioskHTTPServer(configuration: ServerConfiguration(), logger: logger)
/// try await server.run { address in print("Kiosk listening on \(address)") }
/// ```
public struct KioskHTTPServer: Sendable {
    /// What the server was started with.
    public let configuration: ServerConfiguration
    /// The live catalog (reload it after changing the content folder).
    public let catalog: ContentCatalog
    /// The server's metrics, also served on `/metrics`.
    public let metrics: ServerMetrics
    /// The ledger of verified transactions.
    public let ledger: any Ledger
    private let database: KioskDatabase
    /// Applies the revocations other instances sharing the database record.
    private let revocationFeed: RevocationFeed
    /// Prunes old revocation events, at one instance at a time.
    private let revocationPruning: ServiceWideJob
    /// Catches up on the App Store's notification history, at one instance at a time; nil without the App Store
    /// Server API or with `--notification-history-interval 0`.
    private let notificationCatchUp: ServiceWideJob?
    private let responder: RouterResponder<KioskRequestContext>
    /// The routes the router answers, `METHOD /path` with Hummingbird's patterns (`{id}`, `**`), in no particular
    /// order: what the test of `openapi.yaml` compares the document's operations with.
    let routes: [String]
    /// The answers the event loops give without the router (catalog, health).
    private let directAnswers: DirectAnswers
    private let logger: Logger

    /// Prepares everything the server needs: the data directory, the database (its schema brought up to date), the
    /// catalog (hashing new files), the signing keys and the store. Throws when the data directory, the database or
    /// the keys cannot be set up.
    public init(configuration: ServerConfiguration, logger: Logger) async throws {
        try configuration.validate()
        self.configuration = configuration
        self.logger = logger
        try DataDirectory.prepare(configuration.dataDirectory)
        // Everything read from files first, so that a bad file fails the start before the database is open.
        let keyring =
            try configuration.grantSecret.map {
                try GrantKeyring.fromSecret(
                    $0, keyID: configuration.grantKeyID, previous: configuration.previousGrantKeys)
            } ?? GrantKeyring.loadOrCreate(in: configuration.dataDirectory)
        let signer = GrantSigner(keyring: keyring)
        var trustedRoots =
            try configuration.appleRootCAFile.map { try Self.loadRoots(from: $0) }
            ?? [AppleRootCertificates.appleRootCAG3()]
        let clock = configuration.clock
        let now: @Sendable () -> Date = { clock.now }
        let catalog = await ContentCatalog(
            contentDirectory: configuration.contentDirectory, dataDirectory: configuration.dataDirectory, logger: logger
        )
        self.catalog = catalog
        let metrics = ServerMetrics()
        self.metrics = metrics

        let database = try await KioskDatabase.open(
            configuration.databaseURL, connectionWait: configuration.databaseWait, logger: logger)
        self.database = database
        let ledger = SQLLedger(database: database)
        let revocations: RevocationList
        let follower: RevocationFollower
        var sandboxStore: SandboxStore?
        do {
            let schemaVersion = try await database.schemaVersion()
            logger.info(
                "database open", metadata: ["database": "\(database.url)", "schema_version": "\(schemaVersion)"])
            (revocations, follower) = try await RevocationFollower.start(ledger: ledger, logger: logger)
            if configuration.store == .sandbox {
                let authority = try await SandboxSigningAuthority.load(
                    from: database.sql, adoptingFileIn: configuration.dataDirectory, now: now())
                trustedRoots.append(authority.root)
                sandboxStore = try await SandboxStore.open(
                    database: database, dataDirectory: configuration.dataDirectory, catalog: catalog,
                    bundleID: configuration.bundleID, sharedSecret: configuration.sharedSecret,
                    signingAuthority: authority, now: now)
            }
            // SQLite made its files with the process's umask.
            try DataDirectory.tighten(configuration.dataDirectory)
            if case .sqlite(let path) = database.url.location { try DataDirectory.tightenDatabase(at: path) }
        } catch {
            try? await database.close()
            throw error
        }
        self.ledger = ledger
        self.revocationFeed = RevocationFeed(database: database, follower: follower)
        self.revocationPruning = .pruningRevocationEvents(ledger: ledger, database: database, logger: logger)

        let router = Router(context: KioskRequestContext.self)
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: ErrorMiddleware(metrics: metrics))
        let transport: any StoreTransport
        let productionURL: URL
        let sandboxURL: URL
        if let store = sandboxStore {
            transport = SandboxStoreTransport(store: store)
            (productionURL, sandboxURL) = (SandboxStoreTransport.productionURL, SandboxStoreTransport.sandboxURL)
        } else {
            transport = HTTPStoreTransport()
            (productionURL, sandboxURL) = (configuration.productionVerifyURL, configuration.sandboxVerifyURL)
        }
        let verifier = ReceiptVerifier(
            transport: transport, productionURL: productionURL, sandboxURL: sandboxURL,
            sharedSecret: configuration.sharedSecret, environments: configuration.acceptedStoreEnvironments,
            requestTimeout: configuration.storeTimeout,
            cacheTTL: configuration.receiptCacheTTL, now: now,
            onStoreCall: { report in
                metrics.recordStoreCall(
                    environment: report.environment.rawValue, status: report.outcome.label, duration: report.duration)
            })
        let signedData = SignedDataVerifier(
            trustedRoots: trustedRoots, bundleID: configuration.bundleID,
            environments: configuration.acceptedTransactionEnvironments)
        let sandboxAPI = sandboxStore.map { SandboxAppStoreAPI(store: $0) }
        let appStoreAPI = try AppStoreServerAPI.configured(
            configuration, sandbox: sandboxAPI, verifier: signedData, now: now, logger: logger)
        let apiOutcome = AppStoreAPICallOutcome(metrics: metrics)
        let consumption = ConsumptionAnswering(
            configuration: configuration, api: appStoreAPI, ledger: ledger, outcome: apiOutcome, now: now)
        if case .noAPI = consumption.mode {
            logger.warning("--consumption-info is on, but without the App Store Server API no answer can be sent")
        }
        let notifications = NotificationProcessor(
            verifier: signedData, ledger: ledger, revocations: revocations, metrics: metrics,
            consumption: consumption, now: now)
        if let sandboxStore, let sandboxAPI {
            SandboxRoutes(
                store: sandboxStore, verifier: verifier, bodyLimit: configuration.maxJSONBodySize,
                notifications: notifications, api: sandboxAPI
            ).register(on: router)
        }
        let catchUp = appStoreAPI.map {
            NotificationCatchUp(
                api: $0, processor: notifications, ledger: ledger,
                environments: configuration.acceptedStoreEnvironments.sorted { $0.rawValue < $1.rawValue },
                firstRunDays: configuration.notificationHistoryDays, outcome: apiOutcome, metrics: metrics, now: now)
        }
        if let catchUp, configuration.notificationHistoryInterval > .zero {
            notificationCatchUp = ServiceWideJob(
                name: "notification history catch-up", lockKey: NotificationCatchUp.lockKey,
                interval: configuration.notificationHistoryInterval, database: database, logger: logger,
                runsAtStart: true
            ) { try await catchUp.run(logger: logger) }
        } else {
            notificationCatchUp = nil
        }
        let sql = database.sql
        OperationsRoutes(
            metrics: metrics, verifier: verifier,
            readiness: Readiness(pingDatabase: { try await sql.raw("SELECT 1").run() }, catalog: catalog),
            publicMetrics: configuration.publicMetrics
        ).register(on: router)
        OpenAPIRoutes().register(on: router)
        let catalogAnswers = CatalogAnswers(catalog: catalog)
        CatalogRoutes(answers: catalogAnswers).register(on: router)
        let purchases = PurchaseCheck(
            catalog: catalog,
            proofs: ProofVerifier(
                receipts: verifier, signedData: signedData, ledger: ledger, revocations: revocations,
                localReceipts: try Self.localReceipts(configuration), now: now),
            policy: EntitlementPolicy(bundleID: configuration.bundleID),
            refresh: appStoreAPI.map {
                TransactionRefresh(
                    api: $0, ledger: ledger, revocations: revocations, outcome: apiOutcome,
                    interval: configuration.transactionRefresh, now: now)
            }, now: now)
        let installations = InstallationService(
            purchases: purchases, ledger: ledger, metrics: metrics, maxInstallations: configuration.maxInstallations,
            removalLimit: configuration.installationRemovalLimit, now: now)
        let s3Offload = try configuration.s3ContentOffload()
        PurchaseRoutes(
            grants: GrantService(
                purchases: purchases, installations: installations, signer: signer, metrics: metrics,
                grantLifetime: configuration.grantLifetime, offload: s3Offload,
                history: appStoreAPI.map {
                    HistoryRestore(api: $0, ledger: ledger, revocations: revocations, outcome: apiOutcome, now: now)
                }, now: now)
        ).register(on: router)
        InstallationRoutes(installations: installations).register(on: router)
        DeliveryRoutes(
            deliveries: DeliveryService(
                signer: signer, revocations: revocations, ledger: ledger, metrics: metrics, now: now),
            bodyLimit: configuration.maxJSONBodySize
        ).register(on: router)
        NotificationRoutes(processor: notifications).register(on: router)
        let contentAccess = ContentAccess(
            catalog: catalog, tokens: VerifiedTokenCache(signer: signer), revocations: revocations,
            metrics: metrics, now: now)
        let faults = configuration.faults.map { FaultInjector(profile: $0, seed: configuration.faultsSeed) }
        let responder = RangeResponder(
            evaluator: RangeRequestEvaluator(maxRanges: configuration.maxRangesPerRequest),
            chunkSize: configuration.streamChunkSize, sendTimeout: configuration.sendTimeout, metrics: metrics,
            now: now)
        PackRoutes(access: contentAccess, responder: responder, faults: faults).register(on: router)
        var nginx: NginxOffload?
        if case .nginx(let prefix) = configuration.offload {
            nginx = NginxOffload(prefix: prefix, evaluator: responder.evaluator, now: now, metrics: metrics)
        }
        ContentRoutes(access: contentAccess, responder: responder, faults: faults, offload: nginx)
            .register(on: router)
        // Content is answered from the event loops only when each answer is the plain file: no faults to inject,
        // no nginx to hand it to.
        let directContent =
            faults == nil && nginx == nil
            ? DirectContent(
                access: contentAccess, evaluator: responder.evaluator, logger: logger, now: now)
            : nil
        self.directAnswers = DirectAnswers(
            catalog: catalogAnswers, content: directContent, sendTimeout: configuration.sendTimeout, metrics: metrics)
        SubchunkRoutes(
            access: contentAccess,
            subchunks: SubchunkService(access: contentAccess, cutter: SubchunkCutter(metrics: metrics)),
            metrics: metrics
        ).register(on: router)
        if let faults = configuration.faults {
            logger.warning(
                "fault injection is on: content responses may fail on purpose",
                metadata: ["faults": "\(faults)", "seed": "\(configuration.faultsSeed.map(String.init) ?? "random")"])
        }
        if let offload = s3Offload {
            let location = offload.signer.location
            logger.info(
                "content offloaded to an object store: grants carry presigned URLs",
                metadata: [
                    "bucket": "\(location.bucket)", "prefix": "\(offload.prefix)", "region": "\(location.region)",
                    "url_lifetime_seconds": "\(offload.urlLifetime.components.seconds)",
                ])
        }
        if configuration.exposesSandbox {
            logger.warning(
                "the sandbox store, which sells everything for free, listens on a public address",
                metadata: ["host": "\(configuration.host)"])
        }
        self.routes = router.routes.map { "\($0.method.rawValue) \($0.path)" }
        self.responder = router.buildResponder()
    }

    /// The local app receipt verifier of `--receipt-validation api` (Apple Root CA; Xcode receipts only from
    /// `--receipt-local-testing-root`); nil with `verify-receipt`.
    static func localReceipts(_ configuration: ServerConfiguration) throws -> LocalReceiptVerifier? {
        guard configuration.receiptValidation == .api else { return nil }
        let localTestingRoot = try configuration.receiptLocalTestingRoot.map { try loadRoots(from: $0)[0] }
        return LocalReceiptVerifier(
            verifier: try AppReceiptVerifier(bundleID: configuration.bundleID, localTestingRoot: localTestingRoot),
            environments: configuration.acceptedStoreEnvironments)
    }

    /// The certificates of a PEM file (`--apple-root-ca`); throws when it holds none.
    static func loadRoots(from url: URL) throws -> [Certificate] {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw SecretFile.Failure(description: "cannot read the root certificate file \(url.path)")
        }
        let roots = try PEMDocument.parseMultiple(pemString: text).map { try Certificate(pemDocument: $0) }
        guard !roots.isEmpty else {
            throw SecretFile.Failure(description: "\(url.path) holds no PEM certificate")
        }
        return roots
    }

    /// The `http://host:port` a server bound to `host` and `port` is reached at (an IPv6 address in brackets), as
    /// `onListening` gives it.
    static func listeningURL(host: String, port: Int) -> String {
        "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// The length of the listening socket's queue of connections not yet accepted (nginx on Linux: 511).
    static let listenBacklog = 4096

    /// Serves until one of `gracefulShutdownSignals` arrives or `shutdown` is triggered (or until cancelled), then
    /// stops accepting, lets in-flight responses finish for up to ``ServerConfiguration/shutdownGrace`` (and cuts
    /// those still running), and closes the database. `onListening` is called with the bound
    /// `http://host:port` once the server accepts connections (useful with port 0).
    public func run(
        gracefulShutdownSignals: [UnixSignal] = [],
        shutdown: ServerShutdown? = nil,
        reloadOnSIGHUP: Bool = false,
        onListening: @escaping @Sendable (_ address: String, _ port: Int) async -> Void = { _, _ in }
    ) async throws {
        let host = configuration.host
        let metrics = self.metrics
        let readTimeout = configuration.requestReadTimeout
        let eventLoops = MultiThreadedEventLoopGroup.singleton
        let app = Application(
            responder: responder,
            server: HTTPServerBuilder { [directAnswers, configuration] responder in
                KioskHTTP1Channel(
                    http1: HTTP1Channel(
                        responder: responder,
                        configuration: .init(
                            additionalChannelHandlers: [
                                RequestReadTimeoutHandler(
                                    timeout: readTimeout,
                                    onTimeout: { metrics.recordConnectionTimeout(reason: "request_read") })
                            ],
                            // DirectAnswerHandler keeps it.
                            idleTimeout: nil,
                            httpDecoderConfiguration: .init(
                                maxHeaderFieldSize: configuration.maxHeaderSize,
                                maxHeaderListSize: configuration.maxHeaderSize,
                                maxHeaderFieldCount: configuration.maxHeaderCount))),
                    answers: directAnswers, idleTimeout: configuration.idleTimeout)
            },
            // A launch-day spike opens thousands of connections at once: those not yet accepted wait in the
            // kernel's queue (capped by net.core.somaxconn) rather than being refused or retried a second later.
            configuration: .init(
                address: .hostname(host, port: configuration.port), serverName: nil, backlog: Self.listenBacklog),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                await onListening(Self.listeningURL(host: host, port: port), port)
            },
            eventLoopGroupProvider: .shared(eventLoops),
            logger: logger)
        let reload = CatalogReloadService(
            catalog: catalog, interval: configuration.reloadInterval, trapSIGHUP: reloadOnSIGHUP, logger: logger)
        var groupConfiguration = ServiceGroupConfiguration(
            // Shut down in reverse order: the HTTP server first, then the revocation feed its downloads rely on.
            services: [revocationFeed, revocationPruning, reload] + (notificationCatchUp.map { [$0] } ?? []) + [app],
            gracefulShutdownSignals: gracefulShutdownSignals,
            logger: logger)
        // Past the grace, the shutdown becomes a cancellation: the connections still answering are closed.
        groupConfiguration.maximumGracefulShutdownDuration = configuration.shutdownGrace
        let group = ServiceGroup(configuration: groupConfiguration)
        do {
            if shutdown?.attach(group) ?? true { try await group.run() }
        } catch {
            try? await database.close()
            throw error
        }
        try await database.close()
    }
}
