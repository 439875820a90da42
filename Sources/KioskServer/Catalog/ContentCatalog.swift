import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOPosix

/// The live catalog: the current ``CatalogSnapshot``, readable from any request without waiting, and reloads that
/// build a new snapshot off the request path and swap it in.
public final class ContentCatalog: Sendable {
    private let logger: Logger
    private let current: NIOLockedValueBox<CatalogSnapshot>
    /// Serializes reloads and owns the hash cache.
    private let reloader: Reloader

    /// Loads `contentDirectory` (hashing new files, reusing the hash cache kept in `dataDirectory`).
    public init(contentDirectory: URL, dataDirectory: URL?, logger: Logger) async {
        let cacheURL = dataDirectory?.appendingPathComponent("hash-cache.json")
        self.logger = logger
        self.reloader = Reloader(
            loader: CatalogLoader(contentDirectory: contentDirectory, hashCacheURL: cacheURL),
            cache: cacheURL.map(HashCache.init(contentsOf:)) ?? HashCache(), logger: logger)
        self.current = NIOLockedValueBox(CatalogSnapshot(products: [], problems: []))
        await reload()
    }

    /// The snapshot in force now.
    public var snapshot: CatalogSnapshot { current.withLockedValue { $0 } }

    /// Reads the content folder again and swaps in the result, logging what was loaded and every problem.
    @discardableResult
    public func reload() async -> CatalogSnapshot {
        let started = ContinuousClock.now
        guard let snapshot = await reloader.load() else { return self.snapshot }
        swap(in: snapshot, duration: ContinuousClock.now - started)
        return snapshot
    }

    /// Reads the content folder again and swaps in the result only when something changed (the periodic check).
    public func reloadIfChanged() async {
        let started = ContinuousClock.now
        guard let snapshot = await reloader.load() else { return }
        let old = self.snapshot
        guard snapshot.products != old.products || snapshot.problems != old.problems else { return }
        swap(in: snapshot, duration: ContinuousClock.now - started)
    }

    private func swap(in snapshot: CatalogSnapshot, duration: Duration) {
        current.withLockedValue { $0 = snapshot }
        for problem in snapshot.problems {
            logger.warning("content problem, skipped", metadata: ["problem": "\(problem)"])
        }
        logger.info(
            "catalog loaded",
            metadata: [
                "products": "\(snapshot.products.count)", "problems": "\(snapshot.problems.count)",
                "duration": "\(duration)",
            ])
    }

    /// Runs the blocking loader on NIO's thread pool, one load at a time, and keeps the hash cache between loads.
    private actor Reloader {
        let loader: CatalogLoader
        var cache: HashCache
        let logger: Logger

        init(loader: CatalogLoader, cache: HashCache, logger: Logger) {
            self.loader = loader
            self.cache = cache
            self.logger = logger
        }

        /// A new snapshot, or nil when the thread pool is shutting down.
        func load() async -> CatalogSnapshot? {
            let (loader, cache, logger) = (self.loader, self.cache, self.logger)
            guard
                let (snapshot, updated) = try? await NIOThreadPool.singleton.runIfActive({
                    var cache = cache
                    let snapshot = loader.load(cache: &cache)
                    if cache.isDirty, let url = loader.hashCacheURL {
                        do {
                            try cache.save(to: url)
                        } catch {
                            logger.warning("could not save the hash cache", metadata: ["error": "\(error)"])
                        }
                    }
                    return (snapshot, cache)
                })
            else { return nil }
            self.cache = updated
            return snapshot
        }
    }
}
