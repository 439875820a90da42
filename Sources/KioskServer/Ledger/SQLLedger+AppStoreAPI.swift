import Foundation
import SQLKit

/// What the ledger keeps of the App Store Server API (migration 5): confirmations, customer histories and their
/// revisions, notification history cursors.
extension SQLLedger {
    /// Marks these transactions confirmed by the App Store Server API at `date`.
    public func markConfirmed(transactionIDs: [String], at date: Date) async throws {
        guard !transactionIDs.isEmpty else { return }
        try await sql.update("ledger_transactions")
            .set("confirmed_at_ms", to: date.millisecondsSince1970)
            .where("transaction_id", .in, transactionIDs)
            .run()
    }

    /// The customer history that returned the purchase `originalTransactionID`, if one was read.
    public func history(containing originalTransactionID: String) async throws -> CustomerHistory? {
        try await atomically { database in
            guard
                let row = try await database.select().column("*").from("ledger_histories")
                    .where(
                        "history_id", .in,
                        SQLSubquery.select { member in
                            member.column("history_id").from("ledger_history_members")
                                .where("original_transaction_id", .equal, originalTransactionID)
                        }
                    )
                    .first(decoding: HistoryRow.self)
            else { return nil }
            let members = try await database.select().column("original_transaction_id")
                .from("ledger_history_members")
                .where("history_id", .equal, row.history_id)
                .orderBy("original_transaction_id")
                .all(decodingColumn: "original_transaction_id", as: String.self)
            return CustomerHistory(
                historyID: row.history_id, environment: row.environment, revision: row.revision,
                originalTransactionIDs: members)
        }
    }

    /// Keeps `history` (its revision and members). A member already in another history is the same customer's:
    /// that history is merged into this one, every member with it (two first restores of one customer through
    /// different purchases, at once, made two).
    public func saveHistory(_ history: CustomerHistory, at date: Date) async throws {
        try await atomically { database in
            let others = try await database.select().distinct().column("history_id").from("ledger_history_members")
                .where("original_transaction_id", .in, history.originalTransactionIDs)
                .where("history_id", .notEqual, history.historyID)
                .all(decodingColumn: "history_id", as: String.self)
            if !others.isEmpty {
                try await database.update("ledger_history_members").set("history_id", to: history.historyID)
                    .where("history_id", .in, others).run()
                try await database.delete(from: "ledger_histories").where("history_id", .in, others).run()
            }
            try await database.insert(into: "ledger_histories")
                .model(
                    HistoryRow(
                        history_id: history.historyID, environment: history.environment, revision: history.revision,
                        updated_at_ms: date.millisecondsSince1970)
                )
                .onConflict(with: ["history_id"]) { update in
                    update.set(excludedValueOf: "revision").set(excludedValueOf: "updated_at_ms")
                }
                .run()
            for original in history.originalTransactionIDs {
                try await database.insert(into: "ledger_history_members")
                    .columns("original_transaction_id", "history_id")
                    .values(SQLBind(original), SQLBind(history.historyID))
                    .onConflict(with: ["original_transaction_id"]) { $0.set(excludedValueOf: "history_id") }
                    .run()
            }
        }
    }

    /// Up to when the notification history of `environment` was caught up; `nil` before the first catch-up.
    public func notificationCursor(environment: String) async throws -> Date? {
        try await sql.select().column("caught_up_to_ms").from("ledger_notification_cursors")
            .where("environment", .equal, environment)
            .first(decodingColumn: "caught_up_to_ms", as: Int64.self)
            .map(Date.init(milliseconds:))
    }

    /// Records that the notification history of `environment` was caught up to `date`.
    public func setNotificationCursor(environment: String, to date: Date, at now: Date) async throws {
        try await sql.insert(into: "ledger_notification_cursors")
            .columns("environment", "caught_up_to_ms", "updated_at_ms")
            .values(SQLBind(environment), SQLBind(date.millisecondsSince1970), SQLBind(now.millisecondsSince1970))
            .onConflict(with: ["environment"]) { update in
                update.set(excludedValueOf: "caught_up_to_ms").set(excludedValueOf: "updated_at_ms")
            }
            .run()
    }

    /// A row of `ledger_histories`.
    private struct HistoryRow: Codable {
        var history_id: String
        var environment: String
        var revision: String?
        var updated_at_ms: Int64
    }
}
