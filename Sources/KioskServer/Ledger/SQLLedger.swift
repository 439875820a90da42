import Foundation
import SQLKit

/// The ``Ledger`` on any SQLKit database (SQLite by default). Dates are stored as milliseconds since 1970.
public struct SQLLedger: Ledger {
    private let database: any SQLDatabase

    /// Creates the ledger over `database`, creating its table if needed.
    public init(database: any SQLDatabase) async throws {
        self.database = database
        try await database.create(table: "ledger_transactions").ifNotExists()
            .column("transaction_id", type: .text, .primaryKey(autoIncrement: false))
            .column("original_transaction_id", type: .text, .notNull)
            .column("product_id", type: .text, .notNull)
            .column("environment", type: .text, .notNull)
            .column("bundle_id", type: .text, .notNull)
            .column("purchase_date_ms", type: .bigint, .notNull)
            .column("expires_date_ms", type: .bigint)
            .column("cancellation_date_ms", type: .bigint)
            .column("quantity", type: .int, .notNull)
            .column("verified_at_ms", type: .bigint, .notNull)
            .run()
        try await database.raw("CREATE INDEX IF NOT EXISTS ledger_transactions_original ON ledger_transactions (original_transaction_id)").run()
    }

    public func record(_ transactions: [LedgerTransaction]) async throws {
        for transaction in transactions {
            let row = Row(transaction)
            try await database.insert(into: "ledger_transactions")
                .model(row)
                .onConflict(with: ["transaction_id"]) { update in
                    update
                        .set(excludedValueOf: "expires_date_ms")
                        .set(excludedValueOf: "cancellation_date_ms")
                        .set(excludedValueOf: "quantity")
                        .set(excludedValueOf: "verified_at_ms")
                }
                .run()
        }
    }

    public func transaction(id: String) async throws -> LedgerTransaction? {
        try await database.select().column("*").from("ledger_transactions")
            .where("transaction_id", .equal, id)
            .first(decoding: Row.self)
            .map(\.transaction)
    }

    public func count() async throws -> Int {
        try await database.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n")
            .from("ledger_transactions")
            .first(decodingColumn: "n", as: Int.self) ?? 0
    }

    /// The table's row, with the column names of the schema.
    private struct Row: Codable {
        var transaction_id: String
        var original_transaction_id: String
        var product_id: String
        var environment: String
        var bundle_id: String
        var purchase_date_ms: Int64
        var expires_date_ms: Int64?
        var cancellation_date_ms: Int64?
        var quantity: Int
        var verified_at_ms: Int64

        init(_ transaction: LedgerTransaction) {
            transaction_id = transaction.transactionID
            original_transaction_id = transaction.originalTransactionID
            product_id = transaction.productID
            environment = transaction.environment
            bundle_id = transaction.bundleID
            purchase_date_ms = transaction.purchaseDate.millisecondsSince1970
            expires_date_ms = transaction.expiresDate?.millisecondsSince1970
            cancellation_date_ms = transaction.cancellationDate?.millisecondsSince1970
            quantity = transaction.quantity
            verified_at_ms = transaction.verifiedAt.millisecondsSince1970
        }

        var transaction: LedgerTransaction {
            LedgerTransaction(
                transactionID: transaction_id, originalTransactionID: original_transaction_id, productID: product_id,
                environment: environment, bundleID: bundle_id, purchaseDate: Date(milliseconds: purchase_date_ms),
                expiresDate: expires_date_ms.map(Date.init(milliseconds:)),
                cancellationDate: cancellation_date_ms.map(Date.init(milliseconds:)), quantity: quantity,
                verifiedAt: Date(milliseconds: verified_at_ms))
        }
    }
}

extension Date {
    /// Whole milliseconds since 1970, as the store and the ledger count time.
    var millisecondsSince1970: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }

    /// A date from milliseconds since 1970.
    init(milliseconds: Int64) { self.init(timeIntervalSince1970: TimeInterval(milliseconds) / 1000) }
}
