import KioskStore

extension StoreTransaction {
    /// A ledger row as the entitlement policy sees it.
    init(ledger row: LedgerTransaction) {
        self.init(
            productID: row.productID, transactionID: row.transactionID,
            originalTransactionID: row.originalTransactionID, purchaseDate: row.purchaseDate,
            expiresDate: row.expiresDate, cancellationDate: row.cancellationDate, quantity: row.quantity)
    }
}
