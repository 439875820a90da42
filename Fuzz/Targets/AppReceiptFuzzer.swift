// libFuzzer target for the local app receipt reader (`AppReceiptDocument` in KioskStore: the BER/DER reader, the
// PKCS#7 SignedData and the receipt attributes), built by scripts/fuzz.sh; see README "Fuzzing".
//
// Input: the binary form of a receipt. It is read as `AppReceiptVerifier` reads it, through
// `AppReceiptDocument.parse(der:)`, and again through the base64 entry an app's receipt arrives by.
import Foundation
import KioskStore

/// The widest instant the ledger can store: it keeps dates as `Int64` milliseconds since 1970.
private let ledgerSecondsLimit = Double(Int64.max) / 1000

/// Stops the fuzzer with a report when an invariant does not hold.
private func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant violated: \(message())") }
}

/// libFuzzer entry point: reads one receipt both ways and checks the reader's invariants.
@_cdecl("LLVMFuzzerTestOneInput")
public func appReceiptFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let der = Data(bytes: data, count: size)
    let binary = Result { () throws(AppReceiptParseError) in try AppReceiptDocument.parse(der: der) }
    // Below the size limits (where each entry names its own limit), both entries read the same.
    if size <= AppReceiptDocument.maximumDERLength / 2 {
        let text = Result { () throws(AppReceiptParseError) in
            try AppReceiptDocument.parse(base64: der.base64EncodedString(options: .lineLength76Characters))
        }
        check(binary == text, "the base64 entry read \(text), the binary one \(binary)")
    }
    switch binary {
    case .success(let document):
        checkSignedData(document.signedData)
        checkContents(document.contents)
    case .failure(let error):
        check(!error.message.isEmpty, "an error without a message")
    }
    return 0
}

/// The envelope holds what the verifier relies on: content, DER certificates, signed attributes under both tags.
private func checkSignedData(_ signedData: AppReceiptSignedData) {
    check(!signedData.content.isEmpty, "a receipt read from empty content")
    check(signedData.certificates.allSatisfy { $0.first == 0x30 }, "a certificate that is not a SEQUENCE")
    for signer in signedData.signerInfos {
        check(signer.digestAlgorithm.split(separator: ".").count >= 2, "digest OID \(signer.digestAlgorithm)")
        if let attributes = signer.signedAttributes {
            check(attributes.raw.first == 0xA0, "signed attributes not under [0]")
            check(attributes.der.first == 0x31, "signed attributes re-encoded without the SET tag")
        }
    }
}

/// A receipt read has its identifiers, storable dates, and transactions once each, oldest first.
private func checkContents(_ contents: AppReceiptContents) {
    check(!contents.bundleID.isEmpty && !contents.appVersion.isEmpty, "a receipt without a bundle ID or version")
    [contents.creationDate, contents.originalPurchaseDate, contents.expirationDate].forEach(checkDate)
    for purchase in contents.inApp {
        check(!purchase.productID.isEmpty && !purchase.transactionID.isEmpty, "an in-app purchase without IDs")
        check(purchase.quantity >= 0, "quantity \(purchase.quantity)")
        [
            purchase.purchaseDate, purchase.originalPurchaseDate, purchase.expiresDate, purchase.cancellationDate,
        ].forEach(checkDate)
    }
    let transactions = contents.storeTransactions
    let ids = transactions.map(\.transactionID)
    check(Set(ids) == Set(contents.inApp.map(\.transactionID)), "transactions lost or invented")
    check(Set(ids).count == ids.count, "duplicate transaction IDs \(ids)")
    check(transactions.allSatisfy { !$0.originalTransactionID.isEmpty }, "a transaction without an original ID")
    check(
        zip(transactions, transactions.dropFirst()).allSatisfy {
            ($0.purchaseDate, $0.transactionID) < ($1.purchaseDate, $1.transactionID)
        }, "transactions out of order")
}

/// A date read is finite and fits the ledger's `Int64` milliseconds.
private func checkDate(_ date: Date?) {
    guard let seconds = date?.timeIntervalSince1970 else { return }
    check(seconds.isFinite && abs(seconds) < ledgerSecondsLimit, "date \(seconds) s cannot be stored")
}
