// The snippets of KioskKit's DocC articles (Sources/KioskKit/KioskKit.docc) that are not also the README's and import
// StoreKit (on Linux, the StoreKit target of this package stands in for it), word for word (check-snippets.py checks
// that they match the articles).
import KioskKit
import StoreKit

extension Shop {
    /// KioskKit.md, the landing page: a client, a purchase delivered, its transaction finished.
    func deliverFromLaunch(_ transaction: Transaction, proof: PurchaseProof) async throws {
        let kiosk = try await KioskClient(serverURL: URL(string: "https://kiosk.example.com")!)
        let content = try await kiosk.ensureInstalled(productID: transaction.productID, proof: proof)
        library.add(content.directory)  // the files are verified and in place
        await transaction.finish()  // only now: deliver before you finish
    }

    /// GettingStarted.md, "Buying, then ensuring the content is installed": with a StoreKit 2 signed transaction.
    func install(_ transaction: Transaction, verification: VerificationResult<Transaction>) async throws {
        let proof = PurchaseProof.signedTransaction(verification.jwsRepresentation)
        let content = try await kiosk.ensureInstalled(productID: transaction.productID, proof: proof)
        library.add(content.directory)  // the files are verified and in place
        await transaction.finish()  // only now: deliver before you finish
    }
}
