// The README's KioskKit snippets that import KioskKit alone, each in a function of its own, word for word
// (check-snippets.py checks that they match the README).
import KioskKit

/// README, "Adding KioskKit": create the client.
func createClient() async throws -> KioskClient {
    let kiosk = try await KioskClient(serverURL: URL(string: "https://kiosk.example.com")!)
    // cacheRoot defaults to …/Library/Caches/Kiosk (Apple) or $XDG_CACHE_HOME/kiosk, ~/.cache/kiosk (Linux).
    return kiosk
}

/// README, "Adding KioskKit": a client with the app's session settings.
func createClientWithSessionSettings() async throws -> KioskClient {
    let session = URLSessionConfiguration.default
    session.httpAdditionalHeaders = ["X-App-Build": "4711"]  // every request: catalog, receipts, grants, content
    var configuration = KioskClient.Configuration()
    configuration.sessionConfiguration = session
    let kiosk = try await KioskClient(
        serverURL: URL(string: "https://kiosk.example.com")!, configuration: configuration)
    return kiosk
}

/// README, "The catalog".
func listCatalog(kiosk: KioskClient) async throws {
    let catalog = try await kiosk.products(ids: ["com.example.kiosk.magazine.2026-11", "com.example.typo"])
    for product in catalog.products { print(product.title, product.contentLength) }
    print(catalog.invalidProductIDs)  // ["com.example.typo"], like SKProductsResponse.invalidProductIdentifiers
}

/// README, "The catalog": the copy kept with the change feed, and the updates it shows.
func launchCatalog(kiosk: KioskClient) async throws {
    let shelf = await kiosk.cachedProducts ?? []  // at once, offline too
    let catalog = try await kiosk.products().products  // then the few bytes that changed
    for update in try await kiosk.availableUpdates() {  // installed, but served at another version
        print(update.product.title, update.installedVersion, "→", update.availableVersion)
    }
    print(shelf.count, catalog.count)
}

/// README, "Restore", with the app receipt.
func restoreWithReceipt(kiosk: KioskClient, receipt: String) async throws -> KioskClient.RestoreResult {
    let result = try await kiosk.restore(receipt: receipt)
    // result.entitlements: what the receipt entitles now
    // result.enqueued:     downloads started for entitled content not on disk
    // result.alreadyInstalled: products already in place
    return result
}

/// The app's list of downloads, whose rows the README's event loop updates.
protocol DownloadList {
    /// The row that shows a product's download.
    func row(for productID: String) -> any DownloadRow
}

extension DownloadList {
    /// README, "Watching downloads".
    func watchDownloads(kiosk: KioskClient) async {
        for await event in kiosk.events {
            switch event {
            case .stateChanged(let download), .progress(let download):
                row(for: download.productID).update(
                    fraction: download.progress.fraction,
                    speed: download.progress.bytesPerSecond,  // smoothed (EWMA), bytes/s
                    timeLeft: download.progress.timeRemaining)  // nil while unknown
            case .installed(let content):
                print("ready:", content.productID, content.version, content.directory.path)
            case .removed(let productID, _):
                print("gone (removed or purged by the system):", productID)
            }
        }
    }
}

/// A row of the app's download list: what the README's event loop updates.
protocol DownloadRow {
    /// Shows a download's progress.
    func update(fraction: Double, speed: Double, timeLeft: Duration?)
}

/// README, "Watching downloads": one product's state, for a view.
func watchProduct(kiosk: KioskClient) async {
    for await state in await kiosk.stateUpdates(for: "com.example.kiosk.magazine.2026-11") {
        switch state {
        case .notQueued: print("Get")  // neither queued nor installed
        case .downloading(let download): print(download.state, download.progress.fraction)  // on its way
        case .paused(_, .user): print("Resume")
        case .paused(let download, .insufficientStorage):
            print(download.error?.description ?? "Free some space")  // with the bytes needed and available
        case .failed(_, let error): print(error.description, "Retry")  // final; resume(_:) tries again
        case .cancelled: print("Get")  // final
        case .installed(let content): print("Open", content.directory.path)  // final
        case .outOfDate(let content, let available): print("Update", content.version, "→", available)  // final
        }
    }
}

/// README, "Watching downloads": a download's Foundation `Progress` in a tree of progress.
func addProgress(kiosk: KioskClient) async -> Progress {
    let overall = Progress(totalUnitCount: 1)
    if let progress = await kiosk.progress(for: "com.example.kiosk.magazine.2026-11") {
        overall.addChild(progress, withPendingUnitCount: 1)  // overall.cancel() cancels the download
    }
    return overall
}

/// README, "Updates": bring every installed product that the server serves at another version up to date.
func updateAll(kiosk: KioskClient, receipt: String) async throws {
    for update in try await kiosk.availableUpdates() {
        let content = try await kiosk.update(productID: update.product.id, proof: .receipt(receipt))
        print(content.version)  // the served version, installed and verified
    }
    // while it runs: snapshot.progress.bytesReused (copied from the installed version) and .bytesFetched
}
