import Foundation
import KioskStore
import Logging
import NIOConcurrencyHelpers
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// The live catalog: the current ``CatalogSnapshot``, readable from any request without waiting, and reloads that
/// build a new snapshot off the request path and swap it in. It also keeps the descriptors of the files recently
/// served (``openFiles``), and drops those a new snapshot no longer describes as it swaps the snapshot in.
///
/// One load runs at a time. Callers that ask while one runs share a single load queued behind it (it reads the
/// folder after they asked), so a burst of requests for a changed file costs at most two loads. Each finished load
/// has a generation number, and a snapshot is swapped in only over an older one.
public final class ContentCatalog: Sendable {
    private let logger: Logger
    private let current: NIOLockedValueBox<(snapshot: CatalogSnapshot, history: CatalogHistory, generation: UInt64)>
    /// Coalesces reloads and owns the hash cache.
    private let reloader: Reloader
    /// The open descriptors of the files recently served, valid for the snapshot in force.
    let openFiles = OpenFileCache()

    /// Loads `contentDirectory` (hashing new files, reusing the hash cache kept in `dataDirectory`).
    public init(contentDirectory: URL, dataDirectory: URL?, logger: Logger) async {
        let cacheURL = dataDirectory?.appendingPathComponent("hash-cache.txt")
        self.logger = logger
        self.reloader = Reloader(
            loader: CatalogLoader(contentDirectory: contentDirectory, hashCacheURL: cacheURL),
            cache: cacheURL.map(HashCache.init(contentsOf:)) ?? HashCache(), logger: logger)
        let empty = CatalogSnapshot(products: [], problems: [])
        self.current = NIOLockedValueBox((empty, CatalogHistory(first: empty.encoded), 0))
        await reload()
    }

    /// The snapshot in force now.
    public var snapshot: CatalogSnapshot { current.withLockedValue { $0.snapshot } }

    /// The encoded answers of the snapshot in force (all the catalog's answers need, without copying the rest of
    /// the snapshot on every request).
    var encoded: EncodedCatalog { current.withLockedValue { $0.snapshot.encoded } }

    /// The snapshot in force and the history of the snapshots before it, read together.
    var snapshotAndHistory: (snapshot: CatalogSnapshot, history: CatalogHistory) {
        current.withLockedValue { ($0.snapshot, $0.history) }
    }

    /// The generation of the snapshot in force: the number of the load that built it (0 before the first).
    public var generation: UInt64 { current.withLockedValue { $0.generation } }

    /// Reads the content folder again (or shares a load that starts after this call) and swaps in the result,
    /// logging what was loaded and every problem.
    @discardableResult
    public func reload() async -> CatalogSnapshot {
        guard let loaded = await reloader.load() else { return snapshot }
        swap(in: loaded)
        return loaded.snapshot
    }

    /// Reads the content folder again and swaps in the result only when something changed (the periodic check).
    /// An unchanged folder costs a scan (a `stat` of every file, a read of every `Info.json`): nothing is hashed and
    /// the catalog is not encoded again.
    public func reloadIfChanged() async {
        guard let loaded = await reloader.load(), loaded.changed else { return }
        swap(in: loaded)
    }

    /// Swaps in a loaded snapshot unless a newer one is already in force.
    private func swap(in loaded: Reloader.Loaded) {
        let swapped = current.withLockedValue { current in
            guard loaded.generation > current.generation else { return false }
            current = (loaded.snapshot, loaded.history, loaded.generation)
            return true
        }
        guard swapped else { return }
        let snapshot = loaded.snapshot
        openFiles.retainOnly { open in
            snapshot.products[open.productID]?.file(atPath: open.file.path) == open.file
        }
        // An unchanged load trimmed on the thread pool already.
        if loaded.changed { Self.returnFreedMemory() }
        for problem in loaded.snapshot.problems {
            logger.warning("content problem, skipped", metadata: ["problem": "\(problem)"])
        }
        logger.info(
            "catalog loaded",
            metadata: [
                "products": "\(loaded.snapshot.products.count)", "problems": "\(loaded.snapshot.problems.count)",
                "generation": "\(loaded.generation)", "duration": "\(loaded.duration)",
            ])
    }

    /// Gives the memory the previous snapshot and the load freed back to the system. glibc keeps freed memory in
    /// the arena of the thread that allocated it, and loads run on any thread of the pool: without this, at 10,000
    /// products and 100,000 files, the resident size grew by 20–50 MiB at each of the first reloads, and by 5 MiB
    /// at each periodic check that found nothing changed.
    fileprivate static func returnFreedMemory() {
        #if canImport(Glibc)
            _ = mallocTrim?(0)
        #endif
    }

    #if canImport(Glibc)
        /// glibc's `malloc_trim(3)`, looked up once: its header (`malloc.h`) is not part of Swift's Glibc module.
        private static let mallocTrim: (@convention(c) (Int) -> CInt)? = {
            guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim") else { return nil }
            return unsafeBitCast(symbol, to: (@convention(c) (Int) -> CInt).self)
        }()
    #endif

    /// Runs the blocking loader on NIO's thread pool, one load at a time, and keeps the hash cache between loads.
    ///
    /// Every call takes a ticket; a load covers the tickets taken before it started. A caller waits until a load
    /// covering its ticket has finished, starting one when none is running.
    private actor Reloader {
        /// A finished load.
        struct Loaded: Sendable {
            var snapshot: CatalogSnapshot
            /// The snapshots before it, for the change feed.
            var history: CatalogHistory
            /// Whether the snapshot differs from the previous load's (false: it is that snapshot, reused).
            var changed: Bool
            var generation: UInt64
            var duration: Duration
        }

        let loader: CatalogLoader
        let logger: Logger
        /// Used by one load at a time, in place on the thread pool (a copy would duplicate its table).
        private let cache: NIOLockedValueBox<HashCache>
        /// Tickets handed out so far.
        private var tickets: UInt64 = 0
        /// The highest ticket covered by a finished load.
        private var covered: UInt64 = 0
        /// The load running now, if any.
        private var running: Task<Void, Never>?
        /// The newest finished load; nil when the thread pool was shutting down.
        private var latest: Loaded?
        private var generation: UInt64 = 0

        init(loader: CatalogLoader, cache: HashCache, logger: Logger) {
            self.loader = loader
            self.cache = NIOLockedValueBox(cache)
            self.logger = logger
        }

        /// A snapshot read from the folder after this call began, or nil when the thread pool is shutting down.
        func load() async -> Loaded? {
            tickets += 1
            let ticket = tickets
            while covered < ticket {
                await (running ?? start()).value
            }
            return latest
        }

        private func start() -> Task<Void, Never> {
            let covers = tickets
            let (loader, cache, logger, previous) = (self.loader, self.cache, self.logger, self.latest)
            let task = Task {
                let started = ContinuousClock.now
                let result = try? await NIOThreadPool.singleton.runIfActive {
                    let (products, problems) = cache.withLockedValue { cache in
                        let scanned = loader.scan(cache: &cache, previous: previous?.snapshot)
                        if cache.isDirty, let url = loader.hashCacheURL {
                            do {
                                try cache.save(to: url)
                            } catch {
                                logger.warning("could not save the hash cache", metadata: ["error": "\(error)"])
                            }
                        }
                        return scanned
                    }
                    let next = Self.next(after: previous, products: products, problems: problems)
                    // What the scan allocated is garbage now; a changed snapshot trims once the old one is released.
                    if !next.changed { ContentCatalog.returnFreedMemory() }
                    return next
                }
                self.finish(result, covers: covers, duration: ContinuousClock.now - started)
            }
            running = task
            return task
        }

        /// The snapshot and history after `previous` for what a scan found: `previous`'s own when nothing changed
        /// (compared product by product, files included), otherwise a new snapshot, its history advanced.
        private static func next(
            after previous: Loaded?, products: [CatalogProduct], problems: [ContentProblem]
        ) -> (snapshot: CatalogSnapshot, history: CatalogHistory, changed: Bool) {
            if let previous, previous.snapshot.problems == problems,
                previous.snapshot.products.count == products.count,
                products.allSatisfy({ previous.snapshot.products[$0.info.productID] == $0 })
            {
                return (previous.snapshot, previous.history, false)
            }
            let snapshot = CatalogSnapshot(products: products, problems: problems)
            guard let previous else { return (snapshot, CatalogHistory(first: snapshot.encoded), true) }
            return (snapshot, previous.history.advanced(from: previous.snapshot.encoded, to: snapshot.encoded), true)
        }

        private func finish(
            _ result: (snapshot: CatalogSnapshot, history: CatalogHistory, changed: Bool)?,
            covers: UInt64, duration: Duration
        ) {
            running = nil
            covered = covers
            guard let next = result else {
                latest = nil
                return
            }
            generation += 1
            latest = Loaded(
                snapshot: next.snapshot, history: next.history, changed: next.changed, generation: generation,
                duration: duration)
        }
    }
}
