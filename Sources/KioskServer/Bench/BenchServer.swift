import Foundation
import Hummingbird
import HummingbirdCore
import KioskCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import UnixSignals

/// What `kiosk bench` serves and where.
public struct BenchConfiguration: Sendable {
    /// The folder served.
    public var folder: String
    /// The address to bind: a loopback address unless ``allowPublic``.
    public var host = "127.0.0.1"
    /// The port to bind; 0 binds an ephemeral port.
    public var port = 8080
    /// Whether a non-loopback address may be bound (a warning is logged when one is).
    public var allowPublic = false
    /// The seed of the scenarios' random choices; nil draws one (logged at start, so a run can be repeated).
    public var seed: UInt64?
    /// The scenarios served under `/s/`: the built-in ones, and a scenario file's.
    public var scenarios = BenchScenarios.builtInOnly

    /// A configuration serving `folder` with the defaults.
    public init(folder: String) {
        self.folder = folder
    }

    /// Checks what can be checked before binding.
    /// - Throws: ``BenchServer/Failure`` naming the problem.
    public func validate() throws(BenchServer.Failure) {
        guard (0...65535).contains(port) else { throw .init(description: "The port must be from 0 to 65535.") }
        guard allowPublic || LoopbackAddress.contains(host) else {
            throw .init(
                description: "\(host) is not a loopback address: the bench serves its folder to anyone who can "
                    + "reach it. Pass --allow-public to bind it anyway.")
        }
    }
}

/// `kiosk bench`: serves a folder, with no purchase, with the range, precondition and digest semantics of content,
/// and the faults of its scenarios (``BenchRoutes``), for testing any client's downloads.
///
/// It shares nothing with `kiosk serve`'s store, ledger or data folder: it is a separate process with no state on
/// disk.
public struct BenchServer: Sendable {
    /// Why the bench cannot start.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private let configuration: BenchConfiguration
    private let responder: RouterResponder<KioskRequestContext>
    private let routes: BenchRoutes
    private let metrics: ServerMetrics
    private let logger: Logger
    /// The timeouts and limits the bench shares with `kiosk serve`'s defaults.
    private static let defaults = ServerConfiguration()
    /// The seed in use (the configuration's, or the one drawn).
    public let seed: UInt64

    /// A bench for `configuration`.
    /// - Throws: ``Failure`` when the configuration is not valid or the folder cannot be opened.
    public init(configuration: BenchConfiguration, logger: Logger) throws(Failure) {
        try configuration.validate()
        let folder: BenchFolder
        do {
            folder = try BenchFolder(path: configuration.folder)
        } catch {
            throw Failure(description: error.description)
        }
        let seed = configuration.seed ?? UInt64.random(in: .min ... .max)
        let defaults = Self.defaults
        let metrics = ServerMetrics()
        let router = Router(context: KioskRequestContext.self)
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: ErrorMiddleware(metrics: metrics))
        let routes = BenchRoutes(
            folder: folder, scenarios: configuration.scenarios, runs: BenchRuns(seed: seed),
            responder: RangeResponder(
                evaluator: RangeRequestEvaluator(maxRanges: defaults.maxRangesPerRequest),
                chunkSize: defaults.streamChunkSize, sendTimeout: defaults.sendTimeout, metrics: metrics,
                now: { Date() }))
        routes.register(on: router)
        self.routes = routes
        self.configuration = configuration
        self.responder = router.buildResponder()
        self.metrics = metrics
        self.logger = logger
        self.seed = seed
    }

    /// The verdict on every run so far (`GET /s/report` answers the same).
    public func report() async -> BenchReport {
        await routes.report()
    }

    /// Serves until one of `gracefulShutdownSignals` arrives or `shutdown` is triggered (or until cancelled);
    /// `onListening` is called with the bound `http://host:port` once it accepts connections.
    public func run(
        gracefulShutdownSignals: [UnixSignal] = [],
        shutdown: ServerShutdown? = nil,
        onListening: @escaping @Sendable (_ address: String, _ port: Int) async -> Void = { _, _ in }
    ) async throws {
        let host = configuration.host
        if !LoopbackAddress.contains(host) {
            logger.warning(
                "the bench serves its folder, with no purchase, to anyone who can reach this address",
                metadata: ["host": "\(host)"])
        }
        logger.info("bench", metadata: ["folder": "\(configuration.folder)", "seed": "\(seed)"])
        let defaults = Self.defaults
        let readTimeout = defaults.requestReadTimeout
        let metrics = self.metrics
        let app = Application(
            responder: responder,
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [
                        RequestReadTimeoutHandler(
                            timeout: readTimeout, onTimeout: { metrics.recordConnectionTimeout(reason: "request_read") }
                        )
                    ],
                    idleTimeout: TimeAmount(defaults.idleTimeout))),
            configuration: .init(
                address: .hostname(host, port: configuration.port), serverName: nil,
                backlog: KioskHTTPServer.listenBacklog),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                await onListening(KioskHTTPServer.listeningURL(host: host, port: port), port)
            },
            eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton),
            logger: logger)
        var groupConfiguration = ServiceGroupConfiguration(
            services: [app], gracefulShutdownSignals: gracefulShutdownSignals, logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = defaults.shutdownGrace
        let group = ServiceGroup(configuration: groupConfiguration)
        if shutdown?.attach(group) ?? true { try await group.run() }
    }
}
