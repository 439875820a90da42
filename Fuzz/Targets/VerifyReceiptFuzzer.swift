// libFuzzer target for the verifyReceipt answer decoder (the Apple wire types in KioskStore), built by
// scripts/fuzz.sh; see README "Fuzzing".
//
// Input: the raw body of a store answer. It goes through the same call as `ReceiptVerifier` uses
// (`JSONDecoder().decode(AppleVerifyReceiptResponse.self, from:)`), then through `VerifiedReceipt`, which is
// what the entitlement policy and the ledger consume, and through the encoder the sandbox store answers with.
import Foundation
import KioskStore

/// The widest instant the ledger can store: it keeps dates as `Int64` milliseconds since 1970.
private let ledgerSecondsLimit = Double(Int64.max) / 1000

/// Stops the fuzzer with a report when an invariant does not hold.
private func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant violated: \(message())") }
}

/// libFuzzer entry point: decodes one store answer as the verifier does and checks the decoder's invariants.
@_cdecl("LLVMFuzzerTestOneInput")
public func verifyReceiptFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Data(bytes: data, count: size)
    guard let response = try? JSONDecoder().decode(AppleVerifyReceiptResponse.self, from: body) else { return 0 }
    checkResponse(response)
    for environment in StoreEnvironment.allCases {
        checkVerifiedReceipt(VerifiedReceipt(response: response, environment: environment), response: response)
    }
    checkReencoding(response)
    return 0
}

/// Every transaction in a decoded answer has the identifiers the ledger is keyed by and storable dates.
private func checkResponse(_ response: AppleVerifyReceiptResponse) {
    var transactions = response.latestReceiptInfo ?? []
    if let expired = response.latestExpiredReceiptInfo { transactions.append(expired) }
    switch response.receipt {
    case let .app(receipt)?:
        check(!receipt.bundleID.isEmpty, "app receipt without a bundle ID")
        transactions += receipt.inApp
        [receipt.creationDate, receipt.requestDate, receipt.originalPurchaseDate, receipt.expirationDate]
            .forEach(checkDate)
    case let .transaction(receipt)?:
        check(!receipt.bundleID.isEmpty, "transaction receipt without a bundle ID")
        transactions.append(receipt.transaction)
    case nil:
        break
    }
    for transaction in transactions {
        check(!transaction.productID.isEmpty && !transaction.transactionID.isEmpty, "transaction without IDs")
        check(!transaction.originalTransactionID.isEmpty, "transaction without an original transaction ID")
        [
            transaction.purchaseDate, transaction.originalPurchaseDate, transaction.expiresDate,
            transaction.cancellationDate,
        ].forEach(checkDate)
    }
    response.pendingRenewalInfo?.forEach { checkDate($0.gracePeriodExpiresDate) }
}

/// A decoded date is finite and fits the ledger's `Int64` milliseconds.
private func checkDate(_ date: Date?) {
    guard let seconds = date?.timeIntervalSince1970 else { return }
    check(seconds.isFinite && abs(seconds) < ledgerSecondsLimit, "date \(seconds) s cannot be stored")
}

/// `VerifiedReceipt` exists exactly when there is a receipt, holds each transaction once, oldest first.
private func checkVerifiedReceipt(_ verified: VerifiedReceipt?, response: AppleVerifyReceiptResponse) {
    guard let verified else {
        check(response.receipt == nil, "a receipt was dropped")
        return
    }
    check(response.receipt?.bundleID == verified.bundleID, "bundle ID changed")
    check(verified.status == response.status, "status changed")
    let ids = verified.transactions.map(\.transactionID)
    check(Set(ids).count == ids.count, "duplicate transaction IDs \(ids)")
    check(
        zip(verified.transactions, verified.transactions.dropFirst()).allSatisfy {
            ($0.purchaseDate, $0.transactionID) < ($1.purchaseDate, $1.transactionID)
        }, "transactions out of order")
}

/// The sandbox store writes answers with the same types: encoding a decoded answer works, decodes again to the
/// same status and transactions, and a second encoding is identical to the first.
private func checkReencoding(_ response: AppleVerifyReceiptResponse) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    guard let first = try? encoder.encode(response) else {
        fatalError("invariant violated: a decoded answer cannot be encoded")
    }
    guard let reread = try? JSONDecoder().decode(AppleVerifyReceiptResponse.self, from: first) else {
        fatalError("invariant violated: the encoding \(String(decoding: first, as: UTF8.self)) does not decode")
    }
    check(reread.status == response.status && reread.environment == response.environment, "status changed")
    check(reread.receipt?.bundleID == response.receipt?.bundleID, "bundle ID changed")
    let ids = { (answer: AppleVerifyReceiptResponse) in
        VerifiedReceipt(response: answer, environment: .production)?.transactions.map(\.transactionID)
    }
    check(ids(reread) == ids(response), "transactions changed")
    let second = try? encoder.encode(reread)
    check(second == first, "re-encoding is not stable")
}
