import Foundation
import KioskCore

extension DownloadEngine {
    /// Counts a hash failure of `productID`'s bytes in the transfer's ``IntegrityCounts`` (journaling a file's
    /// count). Returns when the bytes are to be fetched again; throws the integrity error that ends the transfer at
    /// the limit.
    func integrityFailed(
        _ failure: IntegrityFailure, productID: String, counts: Locked<IntegrityCounts>, hooks: EngineHooks
    ) async throws(KioskError) {
        let outcome = counts.withLock { $0.count(failure, productID: productID) }
        if let change = outcome.change { await hooks.checkpoint([change], nil, nil) }
        if let error = outcome.error { throw error }
    }
}
