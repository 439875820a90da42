import Foundation
import SQLKit

/// What the ledger keeps of deliveries and consumption answers (migration 6).
extension SQLLedger {
    public func recordDelivery(_ delivery: DeliveryRecord) async throws -> Bool {
        try await atomically { database in
            let known = try await database.select().column("reported_at_ms").from("ledger_deliveries")
                .where("original_transaction_id", .equal, delivery.originalTransactionID)
                .where("product_id", .equal, delivery.productID)
                .where("content_version", .equal, delivery.contentVersion)
                .where("installation_id", .equal, delivery.installationID)
                .first()
            guard known == nil else { return false }
            try await database.insert(into: "ledger_deliveries")
                .model(DeliveryRow(delivery))
                .ignoringConflicts(with: [
                    "original_transaction_id", "product_id", "content_version", "installation_id",
                ])
                .run()
            return true
        }
    }

    public func deliveries(originalTransactionID: String, productID: String) async throws -> [DeliveryRecord] {
        try await sql.select().column("*").from("ledger_deliveries")
            .where("original_transaction_id", .equal, originalTransactionID)
            .where("product_id", .equal, productID)
            .orderBy("reported_at_ms").orderBy("installation_id")
            .all(decoding: DeliveryRow.self)
            .map(\.record)
    }

    public func recordConsumptionAnswer(_ answer: ConsumptionAnswerRecord) async throws {
        try await sql.insert(into: "ledger_consumption_answers")
            .columns("notification_uuid", "transaction_id", "body", "failure", "answered_at_ms")
            .values(
                SQLBind(answer.notificationUUID), SQLBind(answer.transactionID), SQLBind(answer.body),
                SQLBind(answer.failure), SQLBind(answer.answeredAt.millisecondsSince1970)
            )
            .run()
    }

    public func consumptionAnswers(transactionID: String) async throws -> [ConsumptionAnswerRecord] {
        try await sql.select().column("*").from("ledger_consumption_answers")
            .where("transaction_id", .equal, transactionID)
            .orderBy("answer_id")
            .all(decoding: ConsumptionAnswerRow.self)
            .map(\.record)
    }

    /// A row of `ledger_deliveries`.
    private struct DeliveryRow: Codable {
        var original_transaction_id: String
        var product_id: String
        var content_version: String
        var installation_id: String
        var transaction_id: String
        var reported_at_ms: Int64

        init(_ record: DeliveryRecord) {
            original_transaction_id = record.originalTransactionID
            product_id = record.productID
            content_version = record.contentVersion
            installation_id = record.installationID
            transaction_id = record.transactionID
            reported_at_ms = record.reportedAt.millisecondsSince1970
        }

        var record: DeliveryRecord {
            DeliveryRecord(
                originalTransactionID: original_transaction_id, transactionID: transaction_id, productID: product_id,
                contentVersion: content_version, installationID: installation_id,
                reportedAt: Date(milliseconds: reported_at_ms))
        }
    }

    /// A row of `ledger_consumption_answers`.
    private struct ConsumptionAnswerRow: Codable {
        var notification_uuid: String
        var transaction_id: String
        var body: String?
        var failure: String?
        var answered_at_ms: Int64

        var record: ConsumptionAnswerRecord {
            ConsumptionAnswerRecord(
                notificationUUID: notification_uuid, transactionID: transaction_id, body: body, failure: failure,
                answeredAt: Date(milliseconds: answered_at_ms))
        }
    }
}
