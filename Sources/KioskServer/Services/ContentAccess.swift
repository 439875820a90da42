import Foundation
import KioskCore

/// Admits content requests, with no HTTP: checks the download token (signature, expiry, revocation, scope), finds
/// the file it opens in the current catalog, reloading the catalog when the file changed on disk, and opens it (from
/// the catalog's ``OpenFileCache`` when it was served before). The HTTP layer then answers the preconditions and
/// ranges and streams the body.
struct ContentAccess: Sendable {
    let catalog: ContentCatalog
    /// Checks grant tokens (each download's token once, then from memory).
    let tokens: VerifiedTokenCache
    /// Refunded and revoked transactions, whose live tokens no longer open content.
    let revocations: RevocationList
    let metrics: ServerMetrics
    let now: @Sendable () -> Date

    /// The claims of a live token whose purchase still stands.
    func claims(for token: String?) throws(ContentRefusal) -> GrantClaims {
        let admission = admission(of: token)
        if case .failure(.revoked) = admission { metrics.recordRevokedTokenRefusal() }
        return try admission.get()
    }

    /// What ``claims(for:)`` decides, without counting a refusal (the event loop asks first, and leaves every
    /// refusal to the route, which counts it).
    func admission(of token: String?) -> Result<GrantClaims, ContentRefusal> {
        guard let token, !token.isEmpty else { return .failure(.tokenMissing) }
        let claims: GrantClaims
        switch tokens.verify(token, now: now()) {
        case .success(let verified): claims = verified
        case .failure(let refusal): return .failure(.token(refusal))
        }
        // The transaction that paid for the token was cancelled, or its whole purchase was (a refunded period of a
        // subscription closes only that period's tokens).
        if revocations.refuses(transactionID: claims.transactionID, originalTransactionID: claims.originalTransactionID)
        {
            return .failure(.revoked)
        }
        return .success(claims)
    }

    /// The file at `path` if `claims` open it, it is still the version the catalog hashed and the cache holds it
    /// open: what ``file(at:for:)`` answers without waiting, or nil (without saying why) when that takes more (an
    /// open, a reload) or refuses.
    func openedFile(at path: ContentPath, for claims: GrantClaims) -> OpenContentFile? {
        guard claims.opens(productID: path.productID, version: path.version),
            let file = try? Self.resolve(path, in: catalog.snapshot),
            let location = Self.unchangedLocation(of: file)
        else { return nil }
        return catalog.openFiles.cached(file, at: location)
    }

    /// The file at `path`, opened, if `claims` open its product version and the catalog serves it.
    ///
    /// One `lstat` of the path per request tells whether the file is still the version the catalog hashed (a
    /// replaced file has another inode, an edited one another modification or change time); the descriptor then
    /// comes from the cache. A changed file reloads the catalog, and the request is answered from the new manifest.
    func file(at path: ContentPath, for claims: GrantClaims) async throws(ContentRefusal) -> OpenContentFile {
        guard claims.opens(productID: path.productID, version: path.version) else { throw .token(.outOfScope) }
        let file = try Self.resolve(path, in: catalog.snapshot)
        if let opened = await open(file, of: path.productID) { return opened }
        // The file changed on disk since the catalog was built: reload and answer from the new manifest.
        let reloaded = try Self.resolve(path, in: await catalog.reload())
        guard let opened = await catalog.openFiles.open(reloaded, of: path.productID, at: reloaded.absolutePath) else {
            // It changed again while it was hashed: someone is writing it now.
            throw .fileChanging(productID: path.productID, path: path.filePath)
        }
        return opened
    }

    /// The product version and pack a pack request names, if `claims` open that version and the catalog serves it.
    /// Throws a ``ContentRefusal``, or the error of encoding the version's file list (once per version).
    func pack(productID: String, version: String, for claims: GrantClaims) throws
        -> (product: CatalogProduct, pack: ProductPack)
    {
        guard claims.opens(productID: productID, version: version) else { throw ContentRefusal.token(.outOfScope) }
        let snapshot = catalog.snapshot
        let product = try Self.product(productID, version: version, in: snapshot)
        return (product, try snapshot.grantFiles.list(for: product).pack)
    }

    /// One file of a pack being sent, opened: `nil` when it is no longer the file the catalog hashed (the catalog
    /// then reloads, and the pack's answer stops short: its client verifies each file and asks again).
    func packFile(_ file: ManifestFile, of productID: String) async -> OpenContentFile? {
        if let opened = await open(file, of: productID) { return opened }
        _ = await catalog.reload()
        return nil
    }

    /// `file`, opened (from the cache when it was served before), if it is still the file the catalog hashed: one
    /// `lstat` of its path.
    private func open(_ file: ManifestFile, of productID: String) async -> OpenContentFile? {
        guard let location = Self.unchangedLocation(of: file) else { return nil }
        return await catalog.openFiles.open(file, of: productID, at: location)
    }

    /// Where `file` is, if it is still the file the catalog hashed there (one `lstat`).
    private static func unchangedLocation(of file: ManifestFile) -> String? {
        let location = file.absolutePath
        return FileIdentity(atPath: location) == file.identity ? location : nil
    }

    /// The catalog's product `productID`, if `version` is its current version.
    private static func product(_ productID: String, version: String, in snapshot: CatalogSnapshot)
        throws(ContentRefusal) -> CatalogProduct
    {
        guard let product = snapshot.products[productID] else { throw .unknownProduct(productID) }
        guard product.info.contentVersion == version else {
            throw .versionGone(productID: productID, version: version)
        }
        return product
    }

    private static func resolve(_ path: ContentPath, in snapshot: CatalogSnapshot) throws(ContentRefusal)
        -> ManifestFile
    {
        let product = try product(path.productID, version: path.version, in: snapshot)
        guard let file = product.file(atPath: path.filePath) else {
            throw .unknownFile(productID: path.productID, path: path.filePath)
        }
        return file
    }
}
