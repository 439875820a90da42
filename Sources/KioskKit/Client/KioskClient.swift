import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The client of a Kiosk server: catalog, receipts, and a download queue that turns purchases into verified
/// content in the app's caches directory.
///
/// ```swift
/// let kiosk = try await KioskClient(serverURL: URL(string: "https://kiosk.example.com")!)
/// let id = try await kiosk.enqueue(productID: "com.example.kiosk.magazine.2026-11", receipt: receipt)
/// let content = try await kiosk.waitUntilInstalled(productID: "com.example.kiosk.magazine.2026-11")
/// // deliver content.directory to the user, then finish the store transaction
/// ```
///
/// Downloads are identified by product and version, never by URL. Their state is journaled in the cache root
/// at every change, so a new client on the same root (after a crash, a kill or ``close()``) resumes every
/// unfinished download from the bytes on disk.
public actor KioskClient {
    /// The `kiosk` command's default server, `http://127.0.0.1:8080` (`kiosk serve`'s address). ``KioskClient``
    /// itself has no default: ``init(serverURL:cacheRoot:configuration:)`` must be told its server.
    public static let defaultServerURL = URL(string: "http://127.0.0.1:8080")!

    /// The server.
    public nonisolated let serverURL: URL
    /// The cache root (journal, staging, installed content).
    public nonisolated let cacheRoot: URL
    /// The configuration.
    public nonisolated let configuration: Configuration

    nonisolated let layout: CacheLayout
    /// This installation's ID, sent with every grant request so that the server can cap how many installations one
    /// purchase serves: the app's own, or one KioskKit keeps out of the cache root
    /// (``Configuration/installationIdentity``).
    public nonisolated let installationID: String
    nonisolated let api: APIClient
    nonisolated let fetcher: FileFetcher
    nonisolated let engine: DownloadEngine
    nonisolated let journal: Journal
    nonisolated let fileSystem: any KioskFileSystem
    nonisolated let markers: ContentMarkers
    /// This client's ownership of the cache root, released by ``close()`` (or when the client goes away).
    nonisolated let rootLock: CacheRootLock
    nonisolated let broadcaster = EventBroadcaster()
    /// The Foundation `Progress` of each download that ``progress(for:)-(String)`` has handed out.
    nonisolated let progressReporters = ProgressReporters()

    /// Every download and the installed content, and every decision about them. The client carries out the
    /// coordinator's actions; what it keeps itself are the handles of that work: transfer tasks, retry timers and
    /// waiting callers.
    var coordinator: DownloadCoordinator
    var transfers: [DownloadID: Task<Void, Never>] = [:]
    /// Each download's timer: a retry or a probe of the server (``DownloadCoordinator/Action/armRetry(_:at:)``,
    /// ``DownloadCoordinator/Action/armProbe(_:at:)``).
    var timers: [DownloadID: Task<Void, Never>] = [:]
    var installWaiters: [String: [InstallWaiter]] = [:]
    var nextWaiterID: UInt64 = 0
    /// Delivery reports not yet accepted by the server, by product (``reportDelivery(_:)``).
    var pendingDeliveryReports: [String: DeliveryReport] = [:]
    /// The task sending them, while one runs.
    var deliveryReporting: Task<Void, Never>?
    var catalogCache: [String: CachedCatalog] = [:]
    /// The whole catalog as last seen, kept up to date with the change feed (nil before the first fetch).
    var catalogMirror: CatalogMirror?
    var isClosed = false
    let clock = ContinuousClock()
    let epoch = ContinuousClock.now

    /// How the journal was found when this client started (for diagnostics and tests).
    public nonisolated let journalRecovery: JournalRecovery

    /// How the journal was found at start.
    public enum JournalRecovery: Sendable, Hashable {
        /// No journal: a fresh cache root.
        case fresh
        /// The journal read cleanly.
        case loaded
        /// The journal was torn or corrupt; the previous good copy was used.
        case previousCopy
        /// Neither copy was readable; installed content was rebuilt from the disk, downloads were lost.
        case rebuiltFromDisk
    }

    /// Opens a client on a cache root, recovers its journal, reconciles installed content with the disk and
    /// resumes every unfinished download.
    ///
    /// - Parameters:
    ///   - serverURL: the Kiosk server. There is no default: a client that silently talked to
    ///     ``defaultServerURL`` (this machine's port 8080) was a mistake waiting to happen.
    ///   - cacheRoot: where to keep downloads and content (default ``CacheLayout/defaultRoot``). One client per
    ///     cache root: the client holds a lock on it (a `flock` on its `.lock` file) until ``close()``, and a second
    ///     client on the same root, in this process or another, is refused.
    ///   - configuration: tunables.
    /// - Throws: ``KioskError/insecureServerURL(host:)`` for a plain `http://` server that is not loopback unless
    ///   ``Configuration/allowsInsecureHTTP`` is set; ``KioskError/invalidArgument(_:)`` when
    ///   ``Configuration/maximumConnections`` is below 1 or ``Configuration/installationIdentity`` is an app ID that
    ///   is not 1 to 128 letters, digits, `.`, `_` or `-`; ``KioskError/fileSystem(path:underlying:)`` when the cache
    ///   root cannot be created; ``KioskError/cacheRootInUse(path:)`` when another client has it open.
    public init(
        serverURL: URL, cacheRoot: URL = CacheLayout.defaultRoot, configuration: Configuration = Configuration()
    ) async throws {
        try ServerURLPolicy.check(serverURL, allowsInsecureHTTP: configuration.allowsInsecureHTTP)
        guard configuration.maximumConnections >= 1 else {
            throw KioskError.invalidArgument(
                "maximumConnections must be at least 1 (it is \(configuration.maximumConnections)).")
        }
        self.serverURL = serverURL
        self.configuration = configuration
        let layout = CacheLayout(root: cacheRoot)
        self.layout = layout
        self.cacheRoot = layout.root
        let fileSystem = configuration.fileSystem
        self.fileSystem = fileSystem
        let installationID = try configuration.installationIdentity.resolve(
            cacheLayout: layout, fileSystem: fileSystem)
        try CacheFiles.createRoot(layout.root, fileSystem: fileSystem)
        self.rootLock = try await CacheRootLock(root: layout.root)
        self.installationID = installationID
        let api = APIClient(
            serverURL: serverURL, idleTimeout: configuration.requestTimeout,
            limits: APIClient.Limits(
                maximumResponseSize: configuration.maximumResponseSize,
                deadline: configuration.jsonRequestDeadline, grant: configuration.grantLimits),
            installationID: installationID, sessionConfiguration: configuration.sessionConfiguration)
        let fetcher = FileFetcher(
            timeout: configuration.requestTimeout, maximumConnections: configuration.maximumConnections,
            writerFactory: configuration.fileWriterFactory.using(fileSystem),
            sessionConfiguration: configuration.sessionConfiguration)
        self.api = api
        self.fetcher = fetcher
        self.engine = DownloadEngine(
            api: api, fetcher: fetcher, layout: layout, fileSystem: fileSystem,
            budget: ConnectionBudget(limit: configuration.maximumConnections),
            availableSpace: configuration.availableSpace, connectionsPerFile: configuration.maxConnectionsPerFile,
            usesPacks: configuration.usesPacks)
        self.journal = Journal(layout: layout, fileSystem: fileSystem)
        self.markers = ContentMarkers(layout: layout, fileSystem: fileSystem)
        let (snapshot, recovery) = journal.load()
        self.journalRecovery = recovery
        coordinator = DownloadCoordinator(
            snapshot: snapshot, queue: DownloadQueue(maximumConcurrent: configuration.maximumConcurrentDownloads),
            retryPolicy: configuration.retryPolicy, progressInterval: configuration.progressInterval,
            grantLimits: configuration.grantLimits)
        catalogCache =
            fileSystem.contents(of: layout.catalogCache)
            .flatMap { try? JSONDecoder().decode([String: CachedCatalog].self, from: $0) } ?? [:]
        catalogMirror = CatalogMirror.load(from: layout.catalogMirror, fileSystem: fileSystem)
        reconcileInstalled()
        removeOrphanedStaging()
        if !coordinator.downloads.isEmpty || !coordinator.installed.isEmpty || !coordinator.damaged.isEmpty
            || recovery != .fresh
        {
            // One compaction per launch: recovery's changes, a torn log tail or a format 1 journal become a fresh
            // snapshot and an empty log.
            try? journal.replace(with: coordinator.journalSnapshot)
        }
        execute(coordinator.schedule())
    }

    // MARK: - Queue

    /// Enqueues the download of a product's current version, to be paid for by `receipt` (base64, as the
    /// store gives it). The receipt is kept in the journal to renew the grant; it is never logged.
    ///
    /// A product has at most one download: enqueueing it again returns the existing download (resumed if it
    /// was paused or failed, with the new receipt and priority). After a cancel, or once installed, it starts a new
    /// download; for an installed product whose served version is another, that download is an update, which reuses
    /// what the installed version has (see ``update(productID:proof:priority:keepingPrevious:)``).
    @discardableResult
    public func enqueue(productID: String, receipt: String, priority: DownloadPriority = .normal)
        throws(KioskError) -> DownloadID
    {
        try enqueue(productID: productID, proof: .receipt(receipt), priority: priority)
    }

    /// Enqueues the download of a product's current version, to be paid for by `proof`: a receipt, or a StoreKit 2
    /// signed transaction (`Transaction.jwsRepresentation`). The proof is kept in the journal to renew the grant;
    /// it is never logged. A product the server does not know ends its download with
    /// ``KioskError/notFound(productID:)`` for the callers waiting for it, and the download is forgotten: nothing of it
    /// stays, in memory or in the journal.
    ///
    /// Installed content is current when the catalog this client last fetched (``products(ids:)``,
    /// ``availableUpdates()``, the catalog pages) serves its version: then nothing is asked of the server and the
    /// returned ID is that of its finished download (``download(for:)-(DownloadID)``). Otherwise, or without a
    /// catalog, a grant tells, and a new version is fetched as by
    /// ``update(productID:proof:priority:keepingPrevious:)``, which always asks.
    @discardableResult
    public func enqueue(productID: String, proof: PurchaseProof, priority: DownloadPriority = .normal)
        throws(KioskError) -> DownloadID
    {
        try enqueue(productID: productID, proof: proof, priority: priority, keepingPrevious: false)
    }

    /// ``enqueue(productID:proof:priority:)``, and whether the installed version is to be kept when the download
    /// installs another one (once asked, for the rest of the download, across relaunches); with `askingTheServer`,
    /// a grant says whether installed content is current, whatever the catalog says.
    @discardableResult
    func enqueue(
        productID: String, proof: PurchaseProof, priority: DownloadPriority, keepingPrevious: Bool,
        askingTheServer: Bool = false
    ) throws(KioskError) -> DownloadID {
        guard Identifiers.isValidProductID(productID) else {
            throw .invalidArgument("'\(productID)' is not a valid product ID")
        }
        guard !proof.isEmpty else { throw .invalidArgument("The proof of purchase is empty.") }
        try ensureOpen()
        let served = askingTheServer ? nil : catalogMirror?.products[productID]?.contentVersion
        let (id, actions) = coordinator.enqueue(
            productID: productID, proof: proof, priority: priority, keepingPrevious: keepingPrevious,
            installedIsCurrent: served != nil && coordinator.installed[productID]?.version == served,
            now: configuration.clock.now)
        execute(actions)
        return id
    }

    /// Enqueues with a receipt given as raw bytes (it is base64-encoded).
    @discardableResult
    public func enqueue(productID: String, receipt: Data, priority: DownloadPriority = .normal)
        throws(KioskError) -> DownloadID
    {
        try enqueue(productID: productID, receipt: receipt.base64EncodedString(), priority: priority)
    }

    /// Pauses a product's download, keeping its bytes. Returns when the transfer has stopped. A download being
    /// verified (its content is moving into place), already paused, or ended (finished, failed, cancelled) is left
    /// as it is.
    public func pause(_ productID: String) async throws(KioskError) {
        try ensureOpen()
        guard let download = coordinator.live(for: productID) else { throw .notFound(productID: productID) }
        await executeAwaitingStops(coordinator.pause(download.id, reason: .user))
    }

    /// Resumes a paused (or failed) download from the bytes on disk; one waiting for the network is tried at once.
    /// A download on its way (waiting, active, retrying after a backoff, verifying) or finished is left as it is.
    /// - Throws: ``KioskError/cancelled(productID:)`` for a cancelled download (``enqueue(productID:proof:priority:)``
    ///   starts a new one), ``KioskError/notFound(productID:)`` when the product has no download.
    public func resume(_ productID: String) throws(KioskError) {
        try ensureOpen()
        guard let download = coordinator.live(for: productID) else { throw .notFound(productID: productID) }
        if case .cancelled = download.state { throw .cancelled(productID: productID) }
        execute(coordinator.resume(download.id))
    }

    /// Removes a failed or cancelled download from ``downloads`` (and from the journal), with any bytes it left.
    /// - Throws: ``KioskError/downloadInProgress(productID:)`` while the product's download is on its way (cancel it
    ///   first); ``KioskError/notFound(productID:)`` when the product has no failed or cancelled download.
    public func dismiss(productID: String) throws(KioskError) {
        try ensureOpen()
        guard let download = coordinator.live(for: productID) else { throw .notFound(productID: productID) }
        guard let actions = coordinator.dismiss(download.id) else {
            if !download.state.isTerminal { throw .downloadInProgress(productID: productID) }
            throw .notFound(productID: productID)
        }
        execute(actions)
    }

    /// Cancels a product's download and deletes its bytes. Returns when the transfer has stopped. A finished or
    /// cancelled download is left as it is (``remove(_:)`` removes installed content).
    public func cancel(_ productID: String) async throws(KioskError) {
        try ensureOpen()
        guard let download = coordinator.live(for: productID) else { throw .notFound(productID: productID) }
        await executeAwaitingStops(coordinator.cancel(download.id))
    }

    /// Pauses every download that is not finished. After ``close()`` it does nothing (a closed client writes
    /// nothing; the next client on the cache root resumes the downloads as they were).
    public func pauseAll() async {
        guard !isClosed else { return }
        for download in coordinator.ordered where !download.state.isTerminal {
            await executeAwaitingStops(coordinator.pause(download.id, reason: .user))
        }
    }

    /// Resumes every paused download. After ``close()`` it does nothing.
    public func resumeAll() {
        guard !isClosed else { return }
        for download in coordinator.ordered {
            if case .paused = download.state { execute(coordinator.resume(download.id)) }
        }
    }

    /// Cancels every download that is not finished and deletes their bytes. After ``close()`` it does nothing
    /// (nothing is deleted or journaled).
    public func cancelAll() async {
        guard !isClosed else { return }
        for download in coordinator.ordered where !download.state.isTerminal {
            await executeAwaitingStops(coordinator.cancel(download.id))
        }
    }

    /// Every download the client knows (in queue order), including finished, failed and cancelled ones.
    public var downloads: [DownloadSnapshot] { coordinator.ordered.map(\.snapshot) }

    /// The download of one product, if any.
    public func download(for productID: String) -> DownloadSnapshot? {
        coordinator.live(for: productID)?.snapshot
    }

    /// Stops every transfer without changing its journaled state (what the transfers verified until they stopped,
    /// down to how far each chunk in flight arrived, is kept), saves the journal, ends the event streams and
    /// releases the cache root. A new client on the same cache root resumes where this one stopped. After it, calls
    /// that act throw ``KioskError/clientClosed`` (``pauseAll()``, ``resumeAll()`` and ``cancelAll()`` do nothing),
    /// and nothing is written.
    public func close() async {
        guard !isClosed else { return }
        isClosed = true
        for timer in timers.values { timer.cancel() }
        timers.removeAll()
        let running = Array(transfers.values)
        for task in running { task.cancel() }
        for task in running { await task.value }
        transfers.removeAll()
        journal.synchronize()
        for (_, waiters) in installWaiters {
            for waiter in waiters { waiter.continuation.resume(returning: .failure(.clientClosed)) }
        }
        installWaiters.removeAll()
        stopDeliveryReports()
        fetcher.invalidate()
        api.invalidate()
        broadcaster.finish()
        rootLock.release()
    }

    // MARK: - Lifecycle internals

    /// Throws ``KioskError/clientClosed`` once ``close()`` has begun.
    func ensureOpen() throws(KioskError) {
        if isClosed { throw .clientClosed }
    }

}
