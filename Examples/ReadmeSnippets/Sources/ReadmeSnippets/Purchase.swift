// The README's KioskKit snippets that import StoreKit (on Linux, the StoreKit target of this package stands in for
// it), word for word (check-snippets.py checks that they match the README).
import KioskKit
import StoreKit

/// What the README's purchase snippets take from the app around them.
struct Shop: Sendable {
    /// The app's one client.
    let kiosk: KioskClient
    /// Where the app keeps delivered content.
    let library: any Library
    /// Shows a message to the user.
    let showAlert: @Sendable (String) -> Void

    /// README, "Purchase → grant → download → finish".
    func handle(_ transaction: Transaction) async {
        do {
            // The receipt is your proof of purchase (the app receipt, base64). KioskKit stores it with the download
            // so that it can renew an expired grant later; it never logs it.
            let receipt = try Data(contentsOf: Bundle.main.appStoreReceiptURL!).base64EncodedString()
            try await kiosk.enqueue(productID: transaction.productID, receipt: receipt, priority: .high)

            let content = try await kiosk.waitUntilInstalled(productID: transaction.productID)
            library.add(content.directory)  // deliver: the files are verified and in place
            await transaction.finish()  // only now
        } catch let error as KioskError where error.isEntitlementRefusal {
            showAlert("This purchase could not be verified: \(error.description)")
        } catch {
            // Network trouble, full disk…: leave the transaction unfinished; the download stays in the queue.
        }
    }

    /// README, "Purchase → grant → download → finish": the same with `ensureInstalled`, and its named outcomes.
    func deliver(_ transaction: Transaction, receipt: String) async {
        do throws(KioskError) {
            let content = try await kiosk.ensureInstalled(productID: transaction.productID, proof: .receipt(receipt))
            library.add(content.directory)
            await transaction.finish()
        } catch .insufficientStorage(let needed, let available) {
            // The download is paused with its bytes: free space, then call again (or resume(_:)).
            showAlert("Free \(needed - (available ?? 0)) bytes to finish this download.")
        } catch .cancelled {
            // cancel(_:) was called, or this task was cancelled (the download then goes on).
        } catch {
            showAlert(error.description)  // failed, or the client was closed: the transaction stays unfinished
        }
    }

    /// README, "Restore", with a StoreKit 2 signed transaction.
    func restoreWithProof(transaction: Transaction, verificationResult: VerificationResult<Transaction>) async throws {
        let proof = PurchaseProof.signedTransaction(verificationResult.jwsRepresentation)
        try await kiosk.enqueue(productID: transaction.productID, proof: proof, priority: .high)
        let result = try await kiosk.restore(proof: proof)  // a subscription's proof restores the issues it unlocked
        let entitlements = try await kiosk.verify(proof)
        print(result, entitlements)
    }

    /// README, "Installations": this installation takes the place of the one least recently seen.
    func takePlace(productID: String, proof: PurchaseProof) async throws {
        let list = try await kiosk.installations(productID: productID, proof: proof)
        // list.installations: installationID, firstSeen, lastSeen; list.limit; list.removalsLeft; list.removalsResetAt
        if let old = list.installations.filter({ $0.installationID != kiosk.installationID })
            .min(by: { $0.lastSeen < $1.lastSeen })
        {
            _ = try await kiosk.removeInstallation(old.installationID, productID: productID, proof: proof)
            _ = try await kiosk.ensureInstalled(productID: productID, proof: proof)
        }
    }
}

/// The app's collection of delivered content.
protocol Library: Sendable {
    /// Adds a product's installed folder.
    func add(_ directory: URL)
}
