import Foundation
import KioskCore
import KioskServer
import KioskServerTestSupport
import Logging

/// A real Kiosk server on an ephemeral loopback port, serving a private copy of the sample catalog (safe to modify)
/// from a fresh data directory, with the sandbox store unless configured otherwise.
final class TestServer: LoopbackKioskServer {
    /// `http://127.0.0.1:<port>`.
    let baseURL: URL
    /// The bound port.
    let port: Int
    /// The server's own copy of the content folder.
    let contentDirectory: URL
    /// The server's data directory.
    let dataDirectory: URL
    /// The running server (its catalog, ledger and metrics).
    var server: KioskHTTPServer { live.server }
    private let live: LiveKioskServer
    private let root: URL

    private init(root: URL, contentDirectory: URL, dataDirectory: URL, live: LiveKioskServer) {
        self.baseURL = URL(string: "http://127.0.0.1:\(live.port)")!
        self.port = live.port
        self.root = root
        self.contentDirectory = contentDirectory
        self.dataDirectory = dataDirectory
        self.live = live
    }

    /// How long ``stop()`` lets in-flight responses finish.
    static let stopDeadline = LiveKioskServer.stopDeadline

    /// The repository's sample catalog.
    static let sampleContent = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("content")

    /// Sample product IDs.
    enum Sample {
        static let magazine = "com.example.kiosk.magazine.2026-11"
        static let book = "com.example.kiosk.book.swift-server-guide"
        static let levels = "com.example.kiosk.levels.pack1"
        static let subscription = "com.example.kiosk.subscription.monthly"
    }

    /// Starts a server. `content` replaces the sample catalog (it is copied); `prepareContent` may change the copy
    /// before the server reads it; `configure` adjusts the configuration after the test defaults (port 0, temporary
    /// folders, no periodic reload) are set; `logger` replaces the default one (`critical` only, or
    /// `KIOSK_TEST_LOG`), for a test that reads the server's log.
    static func start(
        content: URL? = nil, prepareContent: (URL) throws -> Void = { _ in }, logger: Logger? = nil,
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-e2e-\(UUID().uuidString)")
        let contentDirectory = root.appendingPathComponent("content")
        let dataDirectory = root.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: content ?? sampleContent, to: contentDirectory)
        try prepareContent(contentDirectory)
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.contentDirectory = contentDirectory
        configuration.dataDirectory = dataDirectory
        configuration.reloadInterval = .zero
        configure(&configuration)
        var defaultLogger = Logger(label: "kiosk.test")
        defaultLogger.logLevel =
            ProcessInfo.processInfo.environment["KIOSK_TEST_LOG"].flatMap { Logger.Level(rawValue: $0) } ?? .critical
        let logger = logger ?? defaultLogger
        let live = try await LiveKioskServer.start(configuration: configuration, logger: logger)
        return TestServer(root: root, contentDirectory: contentDirectory, dataDirectory: dataDirectory, live: live)
    }

    /// Runs `body` against a fresh server, and stops the server and removes its folders afterwards, whether `body`
    /// returns or throws.
    static func with<T>(
        content: URL? = nil, prepareContent: (URL) throws -> Void = { _ in }, logger: Logger? = nil,
        configure: (inout ServerConfiguration) -> Void = { _ in }, _ body: (TestServer) async throws -> T
    ) async throws -> T {
        try await start(content: content, prepareContent: prepareContent, logger: logger, configure: configure)
            .serving(body)
    }

    /// Stops the server gracefully (``LiveKioskServer/stop()``) and removes its folders.
    func stop() async {
        await live.stop()
        try? FileManager.default.removeItem(at: root)
    }

    /// A clock for ``ServerConfiguration/clock`` that stands at the current whole second until the test moves it,
    /// so that the dates it gives survive the ledger's milliseconds unchanged.
    static func manualClock() -> ManualClock {
        ManualClock(Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
    }

    /// A new empty folder inside the server's temporary folder (removed by ``stop()``), e.g. a client's cache root.
    func makeScratchDirectory() -> URL {
        root.appendingPathComponent("scratch-\(UUID().uuidString)", isDirectory: true)
    }

    /// Bytes of content the server has streamed so far.
    var contentBytesSent: Int64 { server.metrics.contentBytesSentSoFar }

    /// Re-reads the content folder.
    func reloadCatalog() async { await server.catalog.reload() }

    /// Writes a one-file magazine issue published at `date` into the server's content folder (call
    /// ``reloadCatalog()`` to serve it).
    func publishIssue(_ productID: String, at date: Date) throws {
        let folder = contentDirectory.appendingPathComponent(productID)
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("Contents"), withIntermediateDirectories: true)
        let info: [String: String] = [
            "product_id": productID, "type": "non_consumable", "title": "Issue", "content_version": "1",
            "published_at": RFC3339.string(from: date),
        ]
        try JSONSerialization.data(withJSONObject: info).write(to: folder.appendingPathComponent("Info.json"))
        try Data(repeating: 7, count: 1000).write(to: folder.appendingPathComponent("Contents/issue.pdf"))
    }

    /// The installation the tests' grant requests come from (the server requires one).
    static let installationID = "test-installation"
}

enum TestServerError: Error, CustomStringConvertible {
    case didNotStart
    case unexpected(status: Int, body: String)

    var description: String {
        switch self {
        case .didNotStart: "the server did not start"
        case .unexpected(let status, let body): "unexpected HTTP \(status): \(body)"
        }
    }
}
