import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension KioskClient {
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
    func products(validIDs ids: [String]) async throws(KioskError) -> CatalogResponse {
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
    func refreshedCatalog() async throws(KioskError) -> CatalogMirror {
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
    func walkFeed(from mirror: CatalogMirror) async throws(KioskError) -> CatalogMirror? {
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
    func keep(_ mirror: CatalogMirror) {
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
}
