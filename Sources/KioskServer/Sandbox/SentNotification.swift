import Foundation
import KioskStore
import SQLKit

/// A notification the sandbox store sent, as `sandbox_notifications` keeps it for the notification history.
struct SentNotification: Codable, Sendable {
    var sequence: Int64
    var notification_uuid: String
    var notification_type: String
    var original_transaction_id: String?
    var signed_date_ms: Int64
    /// 1 when it reached the server, 0 when its delivery failed.
    var delivered: Int
    var signed_payload: String

    /// Keeps `payload` (signed as `signed`), about the purchase `originalTransactionID`, in the running transaction
    /// `session`.
    static func record(
        _ payload: NotificationPayload, signed: String, about originalTransactionID: String?, delivered: Bool,
        in session: any SQLDatabase
    ) async throws {
        try await session.insert(into: "sandbox_notifications")
            .columns(
                "notification_uuid", "notification_type", "original_transaction_id", "signed_date_ms", "delivered",
                "signed_payload"
            )
            .values(
                SQLBind(payload.notificationUUID), SQLBind(payload.notificationType), SQLBind(originalTransactionID),
                SQLBind(payload.signedDate.millisecondsSince1970), SQLBind(delivered ? 1 : 0), SQLBind(signed)
            )
            .run()
    }

    /// The notifications signed in `[start, end)` numbered after `sequence`, at most `limit`, in order; only those
    /// about `originals` when given, only the undelivered when `onlyFailures`.
    static func page(
        signedFrom start: Int64, to end: Int64, after sequence: Int64, limit: Int, originals: [String]?,
        type: String?, onlyFailures: Bool, in database: any SQLDatabase
    ) async throws -> [SentNotification] {
        var query = database.select().column("*").from("sandbox_notifications")
            .where("sequence", .greaterThan, sequence)
            .where("signed_date_ms", .greaterThanOrEqual, start)
            .where("signed_date_ms", .lessThan, end)
        if let originals { query = query.where("original_transaction_id", .in, originals) }
        if let type { query = query.where("notification_type", .equal, type) }
        if onlyFailures { query = query.where("delivered", .equal, 0) }
        return try await query.orderBy("sequence").limit(limit).all(decoding: SentNotification.self)
    }

    /// The item of the notification history: the payload and its one delivery attempt.
    var historyItem: AppStoreNotificationHistoryResponse.Item {
        AppStoreNotificationHistoryResponse.Item(
            signedPayload: signed_payload,
            sendAttempts: [
                AppStoreNotificationHistoryResponse.SendAttempt(
                    attemptDate: signed_date_ms, sendAttemptResult: delivered == 1 ? "SUCCESS" : "NO_RESPONSE")
            ])
    }
}
