// The README's update snippets that import KioskKit alone, word for word (check-snippets.py checks that they match
// the README).
import KioskKit

/// README, "Updates": keep the previous version through an update, then delete it once the app is done with it.
func updateKeepingPrevious(kiosk: KioskClient, id: String, proof: PurchaseProof) async throws {
    let content = try await kiosk.update(productID: id, proof: proof, keepingPrevious: true)
    for kept in await kiosk.keptVersions(of: id) {  // [KeptVersion]: .version, .directory
        // … migrate what the app needs from kept.directory, then:
        try await kiosk.removeKeptVersion(kept)
    }
    print(content.version)
}
