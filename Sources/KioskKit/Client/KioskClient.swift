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
    /// Tunables of a client.
    public struct Configuration: Sendable {
        /// How many downloads run at once (default 2).
        public var maximumConcurrentDownloads: Int = 2
        /// The most content connections to the server at once, shared by every download (default 8). A download of
        /// many small files fetches up to this many files at once over kept-alive connections; the downloads in
        /// flight (``maximumConcurrentDownloads``) share the same connections. The content session's
        /// `httpMaximumConnectionsPerHost` is set to it. Must be at least 1.
        public var maximumConnections: Int = 8
        /// The most range requests of one file in flight at once, for a file the server cut into chunks (default 4).
        /// Each chunk is verified on its own as it arrives; the requests draw from ``maximumConnections`` like the
        /// files in flight. Values below 1 count as 1.
        public var maxConnectionsPerFile: Int = 4
        /// Whether runs of small files (up to 256 KiB each, up to 512 files or 2 MiB a run) come from the grant's
        /// pack, one ranged request per run, when the server offers one (default `true`). Each file is still
        /// verified against its own SHA-256. `false` fetches every file with a request of its own, for example when a
        /// cache in front of the server keeps files by URL.
        public var usesPacks: Bool = true
        /// How transient failures are retried.
        public var retryPolicy = RetryPolicy()
        /// The idle timeout of requests, in seconds, when there is no ``sessionConfiguration`` (whose own timeouts
        /// then apply).
        public var requestTimeout: TimeInterval = 60
        /// The app's session settings, applied to both of KioskKit's sessions (catalog, receipts and grants; content),
        /// or `nil` for KioskKit's own: an ephemeral session without cookie storage. It is copied when the client is
        /// created.
        ///
        /// Kept from it: `httpAdditionalHeaders`, the timeouts (``requestTimeout`` then does not apply), cookie
        /// storage and policy (catalog, receipts and grants only), proxies, TLS settings. Replaced, because downloads
        /// need it: no URL cache (`urlCache`, `requestCachePolicy`), no cookies on content requests, the content session's `httpMaximumConnectionsPerHost` (set to
        /// ``maximumConnections``), KioskKit's own delegate and delegate queues, and `Accept-Encoding: identity` on
        /// content requests. On Linux, Foundation ignores `waitsForConnectivity` and the cellular settings
        /// (`allowsCellularAccess`, `allowsExpensiveNetworkAccess`, `allowsConstrainedNetworkAccess`).
        public var sessionConfiguration: URLSessionConfiguration?
        /// The largest answer a JSON request (catalog, receipts, grants) accepts, in bytes, counted as the decoded
        /// bytes arrive (default 16 MiB, over twice the grant of a 20,000-file product). A larger answer fails with
        /// ``KioskError/responseTooLarge(limit:)``.
        public var maximumResponseSize: Int = 16 << 20
        /// The longest a JSON request may take from start to last byte, in seconds (default 120), however steadily
        /// bytes arrive. ``requestTimeout`` is the idle timeout; content downloads have no total deadline.
        public var jsonRequestDeadline: TimeInterval = 120
        /// Whether a plain `http://` server URL may name a host that is not loopback (default `false`, as App
        /// Transport Security). `http://localhost`, `http://127.0.0.1` and `http://[::1]` are always allowed.
        public var allowsInsecureHTTP = false
        /// What a grant may list (file count, total length).
        public var grantLimits = GrantLimits()
        /// Opens partial files for writing; replace it to simulate a full disk.
        public var fileWriterFactory: FileWriterFactory = .posix
        /// Free bytes on the cache volume; replace it to simulate a small disk.
        public var availableSpace: @Sendable (URL) -> Int64? = { DiskSpace.available(at: $0) }
        /// The shortest interval between two progress events of one download.
        public var progressInterval: Duration = .milliseconds(100)
        /// Where the installation ID comes from (default ``InstallationIdentity/standard``: a UUID kept in
        /// Application Support, which survives a purge of Caches and a new cache root). Give the app's own ID,
        /// kept in the Keychain, to keep the installation across reinstalls.
        public var installationIdentity: InstallationIdentity = .standard
        /// Every file-system call of the client goes through it (tests inject one that counts calls).
        var fileSystem: any KioskFileSystem = POSIXFileSystem()
        /// The time retries and probes of an unreachable server go by (tests inject one they move by hand).
        var clock: any KioskClock = SystemClock()

        /// The defaults.
        public init() {}
    }

    /// What ``restore(receipt:)`` found and did.
    public struct RestoreResult: Sendable, Hashable {
        /// Everything the receipt entitles now.
        public var entitlements: [Entitlement]
        /// The downloads started for entitled content that is not on disk, by product.
        public var enqueued: [String: DownloadID]
        /// Entitled products whose content is already installed.
        public var alreadyInstalled: [String]

        /// A result from its parts (for previews and tests; ``restore(proof:)`` makes the real ones).
        public init(entitlements: [Entitlement], enqueued: [String: DownloadID] = [:], alreadyInstalled: [String] = [])
        {
            self.entitlements = entitlements
            self.enqueued = enqueued
            self.alreadyInstalled = alreadyInstalled
        }
    }

    /// The `kiosk` command's default server, `http://127.0.0.1:8080` (`kiosk serve`'s address). ``KioskClient``
    /// itself has no default: ``init(serverURL:cacheRoot:configuration:)`` must be told its server.
    public static let defaultServerURL = URL(string: "http://127.0.0.1:8080")!

    /// The server.
    public nonisolated let serverURL: URL
    /// The cache root (journal, staging, installed content).
    public nonisolated let cacheRoot: URL
    /// The configuration.
    public nonisolated let configuration: Configuration

    private nonisolated let layout: CacheLayout
    /// This installation's ID, sent with every grant request so that the server can cap how many installations one
    /// purchase serves: the app's own, or one KioskKit keeps out of the cache root
    /// (``Configuration/installationIdentity``).
    public nonisolated let installationID: String
    nonisolated let api: APIClient
    private nonisolated let fetcher: FileFetcher
    private nonisolated let engine: DownloadEngine
    private nonisolated let journal: Journal
    private nonisolated let fileSystem: any KioskFileSystem
    private nonisolated let markers: ContentMarkers
    /// This client's ownership of the cache root, released by ``close()`` (or when the client goes away).
    private nonisolated let rootLock: CacheRootLock
    private nonisolated let broadcaster = EventBroadcaster()
    /// The Foundation `Progress` of each download that ``progress(for:)-(String)`` has handed out.
    nonisolated let progressReporters = ProgressReporters()

    /// Every download and the installed content, and every decision about them. The client carries out the
    /// coordinator's actions; what it keeps itself are the handles of that work: transfer tasks, retry timers and
    /// waiting callers.
    private var coordinator: DownloadCoordinator
    private var transfers: [DownloadID: Task<Void, Never>] = [:]
    /// Each download's timer: a retry or a probe of the server (``DownloadCoordinator/Action/armRetry(_:at:)``,
    /// ``DownloadCoordinator/Action/armProbe(_:at:)``).
    private var timers: [DownloadID: Task<Void, Never>] = [:]
    private var installWaiters: [String: [InstallWaiter]] = [:]
    private var nextWaiterID: UInt64 = 0
    private var catalogCache: [String: CachedCatalog] = [:]
    /// The whole catalog as last seen, kept up to date with the change feed (nil before the first fetch).
    private var catalogMirror: CatalogMirror?
    private var isClosed = false
    private let clock = ContinuousClock()
    private let epoch = ContinuousClock.now

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
        self.rootLock = try CacheRootLock(root: layout.root)
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
        self.journalRecovery =
            switch recovery {
            case .fresh: .fresh
            case .loaded: .loaded
            case .previousCopy: .previousCopy
            case .rebuiltFromDisk: .rebuiltFromDisk
            }
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
        if !coordinator.downloads.isEmpty || !coordinator.journalSnapshot.installed.isEmpty || recovery != .fresh {
            // One compaction per launch: recovery's changes, a torn log tail or a format 1 journal become a fresh
            // snapshot and an empty log.
            try? journal.replace(with: coordinator.journalSnapshot)
        }
        execute(coordinator.schedule())
    }

    // MARK: - Events

    /// Every change from now on: state changes, progress (throttled), installs, removals. Each access returns a
    /// new stream; any number of subscribers may listen at once.
    ///
    /// - No state change, install or removal is ever dropped; a run of progress of one product that the reader has
    ///   not taken yet is coalesced to the latest, so a slow reader holds at most one progress element per product
    ///   between two other events.
    /// - A stream ends when the client is closed (at once when accessed after ``close()``), when its reading task is
    ///   cancelled, or when it is released.
    public nonisolated var events: AsyncStream<KioskEvent> { broadcaster.subscribe() }

    /// The state of one product, for a view to bind to: a stream that starts with the state now and follows every
    /// change. Call it on the client (`await kiosk.stateUpdates(for: id)`); the first element is taken on the
    /// client's executor, so no change falls between it and the next.
    ///
    /// - The first element is ``ProductState/notQueued`` when the product is neither queued nor installed (the
    ///   stream then waits for an enqueue), ``ProductState/installed(_:)`` when installed (checked against the disk),
    ///   or ``ProductState/outOfDate(installed:available:)`` instead when the catalog this client last fetched
    ///   (``products(ids:)`` without IDs, ``availableUpdates()``) serves another version and learnt it after the
    ///   content was installed; otherwise the state of the product's download (``ProductState/downloading(_:)``,
    ///   ``ProductState/paused(_:reason:)``, ``ProductState/failed(_:error:)``, ``ProductState/cancelled(_:)``).
    /// - No change of state is ever dropped; a run of progress updates the reader has not taken yet is coalesced to
    ///   the latest, so a slow reader costs at most one element per state change.
    /// - The stream ends after a final state (``ProductState/isFinal``: installed, out of date, failed, cancelled),
    ///   when the reading task is cancelled, and on ``close()`` (on a closed client: the last known state, then the
    ///   end). A pause (by the user or for storage) does not end it.
    public func stateUpdates(for productID: String) -> AsyncStream<ProductState> {
        stateUpdates(for: productID, endingAtFinalState: true)
    }

    /// ``stateUpdates(for:)``, or when `endingAtFinalState` is false a stream that goes on after a final state
    /// (an install, a removal, a new download), until the reading task is cancelled or the client closes.
    func stateUpdates(for productID: String, endingAtFinalState: Bool) -> AsyncStream<ProductState> {
        reconcileInstalled()
        var initial = coordinator.state(of: productID)
        if case .installed(let content) = initial, let available = catalogMirror?.newerVersion(than: content) {
            initial = .outOfDate(installed: content, available: available)
        }
        return broadcaster.subscribeState(of: productID, initial: initial, endingAtFinalState: endingAtFinalState)
    }

    /// ``stateUpdates(for:)`` as ``ProductStatus``, whose `downloading` case carries paused, failed and cancelled
    /// downloads too; it ends where ``stateUpdates(for:)`` does.
    @available(*, deprecated, renamed: "stateUpdates(for:)")
    public func statusUpdates(for productID: String) -> AsyncStream<ProductStatus> {
        let states = stateUpdates(for: productID)
        return AsyncStream { continuation in
            let task = Task {
                for await state in states { continuation.yield(ProductStatus(state)) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Registers an observer (kept weakly) that receives the events as delegate calls until the returned
    /// observation is cancelled, the observer is released or the client is closed (after ``close()``, it receives
    /// nothing). Like ``events``, it never misses a state change; progress it has not taken yet is coalesced.
    @discardableResult
    public nonisolated func addObserver(_ observer: any KioskObserver) -> KioskObservation {
        let stream = broadcaster.subscribe()
        let task = Task { [weak observer, weak self] in
            for await event in stream {
                guard let observer, let client = self else { return }
                switch event {
                case .stateChanged(let snapshot), .progress(let snapshot):
                    await observer.kioskClient(client, didUpdate: [snapshot])
                case .installed(let content):
                    await observer.kioskClient(client, didInstall: content)
                case .removed(let productID, let version):
                    await observer.kioskClient(client, didRemove: productID, version: version)
                }
            }
        }
        return KioskObservation(task: task)
    }

    // MARK: - Catalog and receipts

    /// The catalog (`GET /v1/products`), all products or only `ids`; unknown IDs, and IDs that are not valid product
    /// IDs at all (never sent to the server), come back in `invalidProductIDs`, as `SKProductsResponse` reports them.
    ///
    /// The whole catalog is kept in the cache root and brought up to date with the server's change feed
    /// (`?since=<ETag>`): after one product changed, this costs one request of about a kilobyte, whatever the size
    /// of the catalog; a server without the feed sends the whole catalog, revalidated with `If-None-Match`. Answers
    /// for `ids` are cached with their `ETag` and revalidated with `If-None-Match`.
    public func products(ids: [String]? = nil) async throws(KioskError) -> CatalogResponse {
        try ensureOpen()
        guard let ids else { return CatalogResponse(products: try await refreshedCatalog().ordered) }
        let malformed = ids.filter { !Identifiers.isValidProductID($0) }
        let valid = ids.filter(Identifiers.isValidProductID)
        guard !valid.isEmpty else { return CatalogResponse(products: [], invalidProductIDs: malformed) }
        var answer = try await products(validIDs: valid)
        answer.invalidProductIDs += malformed
        return answer
    }

    /// `GET /v1/products?ids=`, revalidated with the `ETag` of the last answer for the same IDs.
    private func products(validIDs ids: [String]) async throws(KioskError) -> CatalogResponse {
        let key = ids.joined(separator: ",")
        var headers: [String: String] = [:]
        let cached = catalogCache[key]
        if let tag = cached?.entityTag { headers["If-None-Match"] = tag }
        let (answer, response) = try await api.json(
            CatalogResponse.self, method: "GET", path: "/v1/products",
            query: [URLQueryItem(name: "ids", value: key)], headers: headers)
        if response.status == 304 {
            guard let cached, let catalog = try? KioskJSON.decode(CatalogResponse.self, from: cached.body) else {
                throw .invalidResponse("304 Not Modified without a cached catalog")
            }
            return catalog
        }
        guard let answer else { throw .invalidResponse("empty catalog") }
        if let tag = response.header("ETag") {
            catalogCache[key] = CachedCatalog(entityTag: tag, body: response.body)
            if let data = try? JSONEncoder().encode(catalogCache) {
                try? CacheFiles.writeAtomically(data, to: layout.catalogCache, fileSystem: fileSystem)
            }
        }
        return answer
    }

    /// The whole catalog as this client last fetched it, without asking the server: nil before the first
    /// ``products(ids:)`` on this cache root. For a launch without a network.
    public var cachedProducts: [Product]? { catalogMirror?.ordered }

    /// The installed products whose served `content_version` differs from the installed one, by product ID. The
    /// catalog comes from the copy kept in the cache root, brought up to date with the change feed first (one small
    /// request; see ``products(ids:)``). Enqueue a product, or call
    /// ``update(productID:proof:priority:keepingPrevious:)``, to fetch its served version: only what changed is
    /// fetched.
    public func availableUpdates() async throws(KioskError) -> [ProductUpdate] {
        try ensureOpen()
        let catalog = try await refreshedCatalog()
        reconcileInstalled()
        return coordinator.installed.values.compactMap { content in
            guard let served = catalog.products[content.productID], served.contentVersion != content.version else {
                return nil
            }
            return ProductUpdate(product: served, installedVersion: content.version)
        }.sorted { $0.product.id < $1.product.id }
    }

    /// The catalog mirror after a walk of the change feed from its tag, or after fetching the whole catalog when
    /// there is no mirror yet or the server has no feed.
    private func refreshedCatalog() async throws(KioskError) -> CatalogMirror {
        let mirror = catalogMirror
        if let mirror, let updated = try await walkFeed(from: mirror) {
            if updated != mirror { keep(updated) }
            return updated
        }
        let headers = mirror.map { ["If-None-Match": $0.catalogETag] } ?? [:]
        let (answer, response) = try await api.json(
            CatalogResponse.self, method: "GET", path: "/v1/products", headers: headers)
        if response.status == 304, let mirror { return mirror }
        guard let answer, response.status != 304 else { throw .invalidResponse("304 Not Modified without a catalog") }
        let whole = CatalogMirror(
            catalogETag: response.header("ETag") ?? "",
            products: Dictionary(answer.products.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }))
        // Without a tag the copy cannot be brought up to date: it is used, not kept.
        if !whole.catalogETag.isEmpty { keep(whole) }
        return whole
    }

    /// `mirror` brought up to date by a walk of the feed since its tag (``CatalogFeedWalk``: each page applied as it
    /// arrives, the walk bounded by bytes, entries and pages), or nil when the server has no feed (an older server
    /// answers 400, or ignores `since` and sends the whole catalog, which is then fetched with `If-None-Match`) or
    /// its pages do not make one walk.
    private func walkFeed(from mirror: CatalogMirror) async throws(KioskError) -> CatalogMirror? {
        var walk = CatalogFeedWalk(
            from: mirror, limits: CatalogFeedWalk.Limits(maximumResponseSize: configuration.maximumResponseSize))
        var cursor: String?
        repeat {
            var query = [URLQueryItem(name: "since", value: mirror.catalogETag)]
            if let cursor { query.append(URLQueryItem(name: "cursor", value: cursor)) }
            let answer: (CatalogChanges?, APIClient.Response)
            do {
                answer = try await api.json(CatalogChanges.self, method: "GET", path: "/v1/products", query: query)
            } catch .server(status: 400, _, _, _) {
                return nil
            } catch .invalidResponse where walk.pages == 0 {
                // A server without the feed may ignore `since` and answer with the plain catalog.
                return nil
            }
            guard let page = answer.0 else { throw .invalidResponse("an empty page of the catalog feed") }
            guard try walk.take(page, bodyBytes: answer.1.body.count) else { return nil }
            cursor = page.nextCursor
        } while cursor != nil
        return walk.result
    }

    /// Replaces the catalog mirror, in memory and on disk (a failed write only costs a larger next refresh), dated now
    /// (``CatalogMirror/changedAt``).
    private func keep(_ mirror: CatalogMirror) {
        var mirror = mirror
        mirror.changedAt = Date()
        catalogMirror = mirror
        try? mirror.save(to: layout.catalogMirror, fileSystem: fileSystem)
    }

    /// Verifies a receipt with the server (`POST /v1/receipts/verify`) and returns what it entitles now.
    public func verifyReceipt(_ receipt: String) async throws(KioskError) -> EntitlementsResponse {
        try await verify(.receipt(receipt))
    }

    /// Verifies a proof of purchase (a receipt or a StoreKit 2 signed transaction) with the server and returns
    /// what it entitles now.
    public func verify(_ proof: PurchaseProof) async throws(KioskError) -> EntitlementsResponse {
        try ensureOpen()
        return try await api.verify(proof: proof)
    }

    /// Restores purchases: verifies the receipt, then enqueues (at ``DownloadPriority/low``) every entitled
    /// product that has content and is neither installed nor already downloading.
    public func restore(receipt: String) async throws(KioskError) -> RestoreResult {
        try await restore(proof: .receipt(receipt))
    }

    /// Restores purchases with a receipt or a signed transaction (for a subscription, the issues it unlocked are
    /// restored too).
    public func restore(proof: PurchaseProof) async throws(KioskError) -> RestoreResult {
        let answer = try await verify(proof)
        let ids = Array(Set(answer.entitlements.map(\.productID))).sorted()
        var result = RestoreResult(entitlements: answer.entitlements, enqueued: [:], alreadyInstalled: [])
        guard !ids.isEmpty else { return result }
        let catalog = try await products(ids: ids)
        reconcileInstalled()
        for product in catalog.products where product.fileCount > 0 {
            if coordinator.installed[product.id] != nil {
                result.alreadyInstalled.append(product.id)
                continue
            }
            if let live = coordinator.live(for: product.id), !live.isStopped {
                result.enqueued[product.id] = live.id
                continue
            }
            result.enqueued[product.id] = try enqueue(productID: product.id, proof: proof, priority: .low)
        }
        return result
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
    /// returned ID is that of its finished download (``download(for:)``). Otherwise, or without a catalog, a grant
    /// tells, and a new version is fetched as by ``update(productID:proof:priority:keepingPrevious:)``, which always
    /// asks.
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
    private func enqueue(
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

    /// Pauses a product's download, keeping its bytes. Returns when the transfer has stopped.
    public func pause(_ productID: String) async throws(KioskError) {
        try ensureOpen()
        guard let download = coordinator.live(for: productID) else { throw .notFound(productID: productID) }
        await executeAwaitingStops(coordinator.pause(download.id, reason: .user))
    }

    /// Resumes a paused (or failed) download from the bytes on disk.
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

    /// Cancels a product's download and deletes its bytes. Returns when the transfer has stopped.
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

    // MARK: - Installed content

    /// Installed content, checked against the disk first: content whose files vanished (the system may purge
    /// caches) is dropped and reported with ``KioskEvent/removed(productID:version:)``; enqueue it again. After
    /// ``close()``: the last known content, unchecked.
    public func installedContent() -> [InstalledContent] {
        reconcileInstalled()
        return coordinator.installed.values.sorted { $0.productID < $1.productID }
    }

    /// The installed content of one product, checked against the disk (after ``close()``: the last known, unchecked);
    /// `nil` when not installed.
    public func installedContent(for productID: String) -> InstalledContent? {
        reconcileInstalled()
        return coordinator.installed[productID]
    }

    /// The previous versions of a product kept by ``update(productID:proof:priority:keepingPrevious:)``, by version.
    /// They are plain folders that KioskKit no longer tracks or checks: in the caches directory, which the system
    /// may purge, until ``removeKeptVersion(_:)`` deletes them.
    public func keptVersions(of productID: String) -> [KeptVersion] {
        guard Identifiers.isValidProductID(productID) else { return [] }
        let folder = layout.keptRoot.appendingPathComponent(productID, isDirectory: true)
        return (fileSystem.contentsOfDirectory(folder) ?? []).sorted().map { version in
            KeptVersion(productID: productID, version: version, directory: folder.appendingPathComponent(version))
        }
    }

    /// Deletes a kept previous version (see ``keptVersions(of:)``).
    /// - Throws: ``KioskError/notFound(productID:)`` when that version of the product is not kept.
    public func removeKeptVersion(_ kept: KeptVersion) throws(KioskError) {
        try ensureOpen()
        guard keptVersions(of: kept.productID).contains(where: { $0.version == kept.version }) else {
            throw .notFound(productID: kept.productID)
        }
        fileSystem.remove(layout.kept(productID: kept.productID, version: kept.version))
    }

    /// Moves the previous version of an updated product to ``CacheLayout/kept(productID:version:)``, replacing an
    /// earlier kept copy of the same version; content moved out of the caches stays where the app put it. When the
    /// move fails, the folder stays where it was (never deleted: the app asked to keep it).
    private func keep(_ content: InstalledContent) {
        guard !content.isOutsideCaches else { return }
        let destination = layout.kept(productID: content.productID, version: content.version)
        fileSystem.remove(destination)
        let parent = destination.deletingLastPathComponent()
        guard (try? CacheFiles.createDirectory(parent, under: layout.root, fileSystem: fileSystem)) != nil else {
            return
        }
        try? fileSystem.rename(content.directory, to: destination)
    }

    /// Deletes a product's installed content (content moved out of the caches is forgotten, not deleted). Previous
    /// versions kept by updates stay (see ``keptVersions(of:)``).
    /// - Throws: ``KioskError/downloadInProgress(productID:)`` when nothing is installed yet and the product's
    ///   download is on its way (cancel it to stop it); ``KioskError/notFound(productID:)`` when the product is
    ///   neither installed nor downloading.
    public func remove(_ productID: String) throws(KioskError) {
        try ensureOpen()
        guard let (_, actions) = coordinator.removeContent(of: productID) else {
            if let download = coordinator.live(for: productID), !download.state.isTerminal {
                throw .downloadInProgress(productID: productID)
            }
            throw .notFound(productID: productID)
        }
        execute(actions)
    }

    /// Moves a product's installed content out of the caches directory (which the system may purge) to
    /// `directory`, which must not exist yet. The library keeps tracking it there but never deletes it.
    public func moveContentOutOfCaches(productID: String, to directory: URL) throws(KioskError) -> InstalledContent {
        try ensureOpen()
        reconcileInstalled()
        guard var content = coordinator.installed[productID] else { throw .notFound(productID: productID) }
        do {
            try CacheFiles.createRoot(directory.deletingLastPathComponent(), fileSystem: fileSystem)
            try fileSystem.move(content.directory, to: directory)
        } catch let error as KioskError {
            throw error
        } catch {
            throw .fileSystem(path: directory.path, underlying: (error as? SystemCallError)?.message ?? "\(error)")
        }
        content.directory = directory.standardizedFileURL
        content.isOutsideCaches = true
        execute(coordinator.contentMoved(content))
        return content
    }

    /// Returns once the product's content is installed, for the deliver-before-finish pattern: finish the store
    /// transaction only after this returns.
    ///
    /// Returns at once when the content is already installed. Waits through retries and through a pause by the user
    /// (``pause(_:)``; the wait goes on after ``resume(_:)``).
    /// - Throws: the download's error if it fails; ``KioskError/insufficientStorage(needed:available:)`` when the
    ///   download is (or gets) paused because the disk is full: the download stays paused with its bytes, and
    ///   ``resume(_:)`` or ``enqueue(productID:proof:priority:)`` goes on once space is freed;
    ///   ``KioskError/cancelled(productID:)`` if it is cancelled; ``KioskError/notFound(productID:)`` if the product
    ///   is neither installed nor queued; ``KioskError/clientClosed`` when the client is or gets closed; and
    ///   ``KioskError/waitCancelled(productID:)`` at once when the calling task is cancelled (the download goes on),
    ///   as ``ensureInstalled(productID:proof:priority:)`` and ``update(productID:proof:priority:keepingPrevious:)``
    ///   do.
    public func waitUntilInstalled(productID: String) async throws -> InstalledContent {
        try ensureOpen()
        reconcileInstalled()
        switch await waitForInstall(of: productID) {
        case .some(.success(let content)): return content
        case .some(.failure(let error)): throw error
        case .none: throw KioskError.waitCancelled(productID: productID)
        }
    }

    /// Makes sure a product's content is installed, like `NSBundleResourceRequest` and AssetPackManager's
    /// `ensureLocalAvailability(of:)`: returns the installed content at once when the product is installed (checked
    /// against the disk), otherwise enqueues it as ``enqueue(productID:proof:priority:)`` does (a running download
    /// is joined, a paused or failed one resumed with `proof`, a cancelled one started over) and waits until it is
    /// installed. Finish the store transaction only after this returns.
    ///
    /// Outcomes while it waits:
    /// - a pause by the user (``pause(_:)``): it keeps waiting; ``resume(_:)`` goes on;
    /// - a full disk: throws ``KioskError/insufficientStorage(needed:available:)``; the download stays paused with
    ///   its bytes, and a later ``resume(_:)`` or another call of this method goes on;
    /// - the download fails: throws its error;
    /// - ``cancel(_:)``: throws ``KioskError/cancelled(productID:)``;
    /// - ``dismiss(productID:)`` and ``remove(_:)``: neither touches a download on its way (they throw
    ///   ``KioskError/downloadInProgress(productID:)``), so the call goes on;
    /// - ``close()``: throws ``KioskError/clientClosed``;
    /// - the calling task is cancelled: throws ``KioskError/waitCancelled(productID:)`` at once and leaves the
    ///   download running (``KioskError/cancelled(productID:)`` is for a download that ``cancel(_:)`` stopped);
    /// - two calls for one product share one download and return the same content.
    /// - Throws: the outcomes above, and what ``enqueue(productID:proof:priority:)`` throws for invalid arguments.
    public func ensureInstalled(productID: String, proof: PurchaseProof, priority: DownloadPriority = .normal)
        async throws(KioskError) -> InstalledContent
    {
        try ensureOpen()
        reconcileInstalled()
        if let content = coordinator.installed[productID] { return content }
        try enqueue(productID: productID, proof: proof, priority: priority)
        switch await waitForInstall(of: productID) {
        case .some(.success(let content)): return content
        case .some(.failure(let error)): throw error
        case .none: throw .waitCancelled(productID: productID)
        }
    }

    /// Brings an installed product to the version the server serves now, and returns the installed content (the same
    /// content when it is current already). Like ``enqueue(productID:proof:priority:)`` of an installed product, it
    /// asks for a grant; when the grant names another version, that version is built from the installed one first:
    /// files whose SHA-256 is unchanged (under any path) are copied or cloned, the chunks of changed files found in
    /// the installed files are copied, and only the rest is fetched (``DownloadProgress/bytesReused`` and
    /// ``DownloadProgress/bytesFetched`` tell which). The installed version stays in place and usable until the new
    /// one is installed, then it is deleted; with `keepingPrevious`, it is moved instead to
    /// `Kept/<product_id>/<version>/` under the cache root, found with ``keptVersions(of:)`` and deleted with
    /// ``removeKeptVersion(_:)`` (the request holds for the rest of this download, across relaunches, whoever
    /// enqueues the product meanwhile). A product not installed is downloaded whole, as by
    /// ``ensureInstalled(productID:proof:priority:)``.
    ///
    /// Outcomes while it waits are those of ``ensureInstalled(productID:proof:priority:)``; a full disk throws
    /// ``KioskError/insufficientStorage(needed:available:)`` with the installed version intact. Use
    /// ``availableUpdates()`` to learn which products have a new version without asking for grants.
    public func update(
        productID: String, proof: PurchaseProof, priority: DownloadPriority = .normal, keepingPrevious: Bool = false
    ) async throws(KioskError) -> InstalledContent {
        try enqueue(
            productID: productID, proof: proof, priority: priority, keepingPrevious: keepingPrevious,
            askingTheServer: true)
        switch await waitForInstall(of: productID) {
        case .some(.success(let content)): return content
        case .some(.failure(let error)): throw error
        case .none: throw .waitCancelled(productID: productID)
        }
    }

    /// Waits until the product is installed or nothing more happens without the app (see
    /// ``DownloadCoordinator/installWait(for:)``); `nil` when the calling task is cancelled.
    private func waitForInstall(of productID: String) async -> Result<InstalledContent, KioskError>? {
        switch coordinator.installWait(for: productID) {
        case .installed(let content): return .success(content)
        case .fail(let error): return .failure(error)
        case .wait: break
        }
        guard !Task.isCancelled else { return nil }
        nextWaiterID += 1
        let id = nextWaiterID
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                installWaiters[productID, default: []].append(InstallWaiter(id: id, continuation: continuation))
            }
        } onCancel: {
            // Runs on the actor after the waiter is registered (the registration does not suspend).
            Task { await self.stopWaiting(id, for: productID) }
        }
    }

    /// Ends the wait of a call whose task was cancelled.
    private func stopWaiting(_ id: UInt64, for productID: String) {
        guard let index = installWaiters[productID]?.firstIndex(where: { $0.id == id }) else { return }
        installWaiters[productID]?.remove(at: index).continuation.resume(returning: nil)
    }

    /// Stops every transfer without changing its journaled state, saves the journal, ends the event streams and
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

    /// Carries out the coordinator's actions in order; a stop waits until the transfer has ended before the rest.
    private func executeAwaitingStops(_ actions: [DownloadCoordinator.Action]) async {
        for action in actions {
            if case .stopTransfer(let id) = action, let task = transfers[id] {
                task.cancel()
                await task.value
            } else {
                execute([action])
            }
        }
    }

    /// Carries out the coordinator's actions in order, without waiting for a stopped transfer to end.
    private func execute(_ actions: [DownloadCoordinator.Action]) {
        for action in actions {
            switch action {
            case .journal(let entries, let synchronize):
                if !entries.isEmpty { journal.append(entries) }
                if synchronize { journal.synchronize() }
            case .startTransfer(let id, let work):
                startTransfer(id, work)
            case .renewGrant(let id, let work):
                startTransfer(id, work, renewingGrant: true)
            case .stopTransfer(let id):
                transfers[id]?.cancel()
            case .armRetry(let id, let date):
                let clock = configuration.clock
                arm(id) { [weak self] in
                    guard (try? await clock.sleep(until: date)) != nil else { return }
                    await self?.retryDue(id)
                }
            case .armProbe(let id, let date):
                let (clock, api) = (configuration.clock, api)
                arm(id) { [weak self] in
                    guard (try? await clock.sleep(until: date)) != nil else { return }
                    let reachable = await api.isReachable()
                    guard !Task.isCancelled else { return }
                    await self?.networkProbed(id, reachable: reachable)
                }
            case .disarmTimer(let id):
                timers.removeValue(forKey: id)?.cancel()
            case .emit(let event):
                broadcaster.send(event)
            case .finishWaiters(let productID, let result):
                for waiter in installWaiters.removeValue(forKey: productID) ?? [] {
                    waiter.continuation.resume(returning: result)
                }
            case .deleteStaging(let productID):
                fileSystem.remove(layout.staging(productID: productID))
            case .deleteContent(let content):
                if !content.isOutsideCaches { fileSystem.remove(content.directory) }
            case .keepContent(let content):
                keep(content)
            case .recordMarker(let content):
                markers.record(content)
            case .forgetMarker(let productID):
                markers.forget(productID)
            case .schedule:
                if !isClosed { execute(coordinator.schedule()) }
            }
        }
    }

    /// Replaces the download's timer with `work`.
    private func arm(_ id: DownloadID, _ work: @escaping @Sendable () async -> Void) {
        timers[id]?.cancel()
        timers[id] = Task(operation: work)
    }

    private func retryDue(_ id: DownloadID) {
        timers[id] = nil
        guard !isClosed else { return }
        execute(coordinator.retryDue(id))
    }

    private func networkProbed(_ id: DownloadID, reachable: Bool) {
        timers[id] = nil
        guard !isClosed else { return }
        execute(coordinator.networkProbed(id, reachable: reachable, now: configuration.clock.now))
    }

    private func startTransfer(_ id: DownloadID, _ work: DownloadWork, renewingGrant: Bool = false) {
        let engine = self.engine
        let hooks = EngineHooks(
            checkpoint: { [weak self, journal] changes, directory, file in
                await self?.checkpoint(id, changes, syncing: directory, file: file)
                await journal.waitForRoom()  // the journal's queue stays bounded however fast files complete
            },
            durable: { [journal] in await journal.waitUntilDurable() },
            progress: { [weak self] written, expected in
                let at = ContinuousClock.now
                Task { await self?.reportProgress(id, written: written, expected: expected, at: at) }
            },
            verifying: { [weak self] in await self?.enterVerifying(id) ?? false },
            integrityVerdict: { [weak self] failure in await self?.integrityFailed(id, failure) ?? .stop })
        // Off the cooperative pool: a transfer waits for the disk (TransferExecutor).
        transfers[id] = Task.transfer { [weak self] in
            let result: Result<InstalledContent, any Error>
            do {
                result = .success(try await engine.run(work, renewingGrant: renewingGrant, hooks: hooks))
            } catch {
                result = .failure(error)
            }
            await self?.transferEnded(id, result)
        }
    }

    /// Applies the engine's changes to the download and appends them to the journal (without waiting for the disk:
    /// the journal's group commit makes them durable together with their neighbours').
    private func checkpoint(_ id: DownloadID, _ changes: [DownloadChange], syncing directory: URL?, file: UnsyncedFile?)
    {
        guard !isClosed else { return }
        let (entries, actions) = coordinator.checkpoint(id, changes)
        guard !entries.isEmpty else { return }
        journal.append(entries, syncing: directory, file: file)
        execute(actions)
    }

    private func integrityFailed(_ id: DownloadID, _ failure: IntegrityFailure) -> IntegrityVerdict {
        guard !isClosed else { return .stop }
        let (verdict, actions) = coordinator.integrityFailed(id, failure)
        execute(actions)
        return verdict
    }

    private func reportProgress(_ id: DownloadID, written: Int64, expected: Int64, at instant: ContinuousClock.Instant)
    {
        execute(
            coordinator.progress(
                id, written: written, expected: expected, at: instant, since: epoch, now: ContinuousClock.now))
    }

    private func enterVerifying(_ id: DownloadID) -> Bool {
        guard !isClosed else { return false }
        let (accepted, actions) = coordinator.transferCompleted(id)
        execute(actions)
        return accepted
    }

    private func transferEnded(_ id: DownloadID, _ result: Result<InstalledContent, any Error>) {
        transfers[id] = nil
        guard !isClosed else { return }
        execute(coordinator.transferEnded(id, result, now: configuration.clock.now))
    }

    // MARK: - Disk

    /// Drops installed content whose files vanished, and finished downloads that pointed at it; content with some
    /// files left is kept for the next download to copy from. Not after ``close()``: a closed client answers the
    /// last known state (another client may own the cache root by now).
    private func reconcileInstalled() {
        guard !isClosed else { return }
        let (_, vanished) = ContentReconciler.reconcile(Array(coordinator.installed.values), markers: markers)
        guard !vanished.isEmpty else { return }
        let partial = vanished.filter { content in
            content.files.contains { fileSystem.fileSize(content.fileURL($0.path)) == $0.length }
        }
        execute(coordinator.contentVanished(vanished, partial: Set(partial.map(\.productID))))
    }

    /// Deletes staging folders no download owns (their receipts are unknown, so they cannot be resumed).
    private func removeOrphanedStaging() {
        let owned = Set(
            coordinator.downloads.values.filter { !$0.state.isTerminal || $0.state.name == "failed" }.map(\.productID))
        guard let folders = fileSystem.contentsOfDirectory(layout.stagingRoot) else { return }
        for folder in folders where !owned.contains(folder) {
            fileSystem.remove(layout.stagingRoot.appendingPathComponent(folder))
        }
    }
}

/// A caller of ``KioskClient/waitUntilInstalled(productID:)`` or
/// ``KioskClient/ensureInstalled(productID:proof:priority:)``, waiting for the outcome (`nil`: its task was
/// cancelled); its ID lets a cancelled call end its own wait alone.
private struct InstallWaiter {
    let id: UInt64
    let continuation: CheckedContinuation<Result<InstalledContent, KioskError>?, Never>
}

/// A cached catalog answer.
struct CachedCatalog: Codable, Sendable {
    var entityTag: String
    var body: Data
}

/// The registration of a ``KioskObserver``; cancel it to stop the calls.
public struct KioskObservation: Sendable {
    let task: Task<Void, Never>

    /// Stops delivering events to the observer.
    public func cancel() { task.cancel() }
}
