// The README's `ProductStatusStore` snippet: a small `@Observable` model of a screen of products, word for word
// (check-snippets.py checks that it matches the README).
import KioskKit
import Observation  // SwiftUI imports it too

/// README, "Watching downloads": the store behind a shelf of products.
@MainActor @Observable
final class ShelfModel {
    let store: ProductStatusStore

    init(kiosk: KioskClient, productIDs: [String]) {
        store = ProductStatusStore(client: kiosk)
        store.track(productIDs)
    }

    /// What a product's button says.
    func buttonTitle(for productID: String) -> String {
        switch store.state(of: productID) {
        case nil, .notQueued?, .cancelled?: "Get"
        case .downloading(let download)?: "\(Int(download.progress.fraction * 100)) %"
        case .paused?: "Resume"
        case .failed?: "Retry"
        case .installed?: "Open"
        case .outOfDate?: "Update"
        }
    }
}
