import KioskStore

/// Something that verifies receipts with a store: the seam the HTTP routes depend on.
///
/// ``ReceiptVerifier`` is the implementation; route tests can substitute a fake, and a scaled-out deployment
/// can put a shared cache in front of it.
public protocol ReceiptVerifying: Sendable {
    /// Verifies a base64-encoded receipt, failing with a typed, user-presentable error.
    func verify(receiptData: String) async throws(ReceiptVerificationError) -> VerifiedReceipt
}

extension ReceiptVerifier: ReceiptVerifying {}
