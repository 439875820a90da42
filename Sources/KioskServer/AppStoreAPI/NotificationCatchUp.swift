import Foundation
import KioskStore
import Logging

/// Refunds never missed: reads `POST /inApps/v1/notifications/history` for each environment the server accepts,
/// from where the last catch-up of that environment ended (kept in the ledger), and processes every notification
/// exactly as if it had been delivered (``NotificationProcessor``: idempotent by `notificationUUID`), so that a
/// refund made while the server was down revokes live tokens at the next catch-up.
///
/// The very first catch-up starts ``firstRunDays`` back, never more than Apple's 180 days (it refuses an older
/// `startDate` with error 4000012). Each later one starts ``overlap`` before where the last ended, so that a
/// notification Apple lists a little late is not skipped (the overlap's notifications are known, and counted so).
/// The server runs it at start and every `--notification-history-interval` as a ``ServiceWideJob``: one instance
/// at a time.
struct NotificationCatchUp: Sendable {
    /// How far back Apple lets a notification history start.
    static let reach: TimeInterval = 180 * 86_400
    /// Kept inside Apple's reach, for clocks that differ.
    static let reachMargin: TimeInterval = 3600
    /// How far before the last end the next catch-up starts.
    static let overlap: TimeInterval = 10 * 60
    /// The most pages one catch-up of one environment reads.
    static let maxPages = 10_000
    /// The job's advisory lock: `KIOSKNTF`.
    static let lockKey: Int64 = 0x4B49_4F53_4B4E_5446

    /// What one catch-up of one environment did.
    struct Report: Sendable, Hashable {
        /// Where it started and ended.
        var start: Date
        var end: Date
        /// Notifications applied now (missed before).
        var caughtUp = 0
        /// Notifications already applied when they were delivered.
        var known = 0
        /// Notifications that did not verify (skipped).
        var refused = 0
    }

    let api: AppStoreServerAPI
    let processor: NotificationProcessor
    let ledger: any Ledger
    let environments: [StoreEnvironment]
    let firstRunDays: Int
    let outcome: AppStoreAPICallOutcome
    let metrics: ServerMetrics
    let now: @Sendable () -> Date

    /// Catches up on every environment in turn; an environment whose history cannot be read keeps its cursor (the
    /// next run starts from there).
    /// - Throws: ``AppStoreAPIFailure/misconfigured(status:errorCode:)`` (after the other environments ran); the
    ///   ledger's errors.
    @discardableResult
    func run(logger: Logger) async throws -> [StoreEnvironment: Report] {
        var reports: [StoreEnvironment: Report] = [:]
        var misconfigured: (any Error)?
        for environment in environments {
            do {
                reports[environment] = try await catchUp(environment, logger: logger)
            } catch let failure as AppStoreAPIFailure {
                do {
                    try outcome.failed("notification_history", failure, logger: logger)
                } catch {
                    misconfigured = error
                }
            }
        }
        if let misconfigured { throw misconfigured }
        return reports
    }

    /// Reads the notification history of `environment` from its cursor to now and processes every notification.
    func catchUp(_ environment: StoreEnvironment, logger: Logger) async throws -> Report {
        let end = now()
        let earliest = end.addingTimeInterval(-Self.reach + Self.reachMargin)
        let cursor = try await ledger.notificationCursor(environment: environment.rawValue)
        let wanted =
            cursor?.addingTimeInterval(-Self.overlap)
            ?? end.addingTimeInterval(-TimeInterval(firstRunDays) * 86_400)
        var report = Report(start: max(wanted, earliest), end: end)
        let request = AppStoreNotificationHistoryRequest(
            startDate: report.start.millisecondsSince1970, endDate: end.millisecondsSince1970)
        var token: String?
        for _ in 0..<Self.maxPages {
            let page = try await api.notificationHistory(request, paginationToken: token, environment: environment)
            for signedPayload in page.signedPayloads {
                do {
                    let result = try await processor.process(signedPayload: signedPayload, logger: logger)
                    if result.outcome == .duplicate {
                        report.known += 1
                    } else {
                        report.caughtUp += 1
                        logger.notice(
                            "missed notification caught up",
                            metadata: [
                                "type": "\(result.notificationType)", "outcome": "\(result.outcome.rawValue)",
                                "environment": "\(environment.rawValue)",
                            ])
                    }
                } catch let refusal as SignedDataRefusal {
                    report.refused += 1
                    logger.error(
                        "notification in the history did not verify; skipped", metadata: ["reason": "\(refusal.reason)"]
                    )
                }
            }
            token = page.hasMore ? page.paginationToken : nil
            guard token != nil else {
                outcome.succeeded("notification_history")
                try await ledger.setNotificationCursor(environment: environment.rawValue, to: end, at: end)
                for (name, count) in [
                    ("caught_up", report.caughtUp), ("known", report.known), ("refused", report.refused),
                ]
                where count > 0 {
                    metrics.recordNotificationCatchUp(outcome: name, count: count)
                }
                logger.info(
                    "notification history read",
                    metadata: [
                        "environment": "\(environment.rawValue)", "caught_up": "\(report.caughtUp)",
                        "known": "\(report.known)", "refused": "\(report.refused)",
                    ])
                return report
            }
        }
        throw AppStoreAPIAnswerError(call: "notification history", problem: "more than \(Self.maxPages) pages")
    }
}
