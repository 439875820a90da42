import Logging
import ServiceLifecycle

/// The service that wakes a ``RevocationFollower``: at each notification on ``DatabaseChannel/revocations`` and each
/// reconnection of the listening connection (PostgreSQL), and every ``pollInterval(for:)`` in any case. It runs until
/// the server's graceful shutdown reaches it, after the HTTP server's (a download still finishing is refused as soon
/// as its purchase is revoked).
struct RevocationFeed: Service {
    let database: KioskDatabase
    let follower: RevocationFollower

    /// How often the follower reads the events without being woken: on SQLite, which has no notifications, often
    /// enough that instances sharing one file see a revocation within a second (an indexed read of nothing new costs
    /// microseconds); on PostgreSQL, a safety net under `LISTEN`.
    static func pollInterval(for engine: KioskDatabase.Engine) -> Duration {
        switch engine {
        case .sqlite: .milliseconds(250)
        case .postgres: .seconds(5)
        }
    }

    func run() async throws {
        let follower = self.follower
        await cancelWhenGracefulShutdown {
            await database.follow(.revocations, every: Self.pollInterval(for: database.engine)) {
                await follower.catchUp()
            }
        }
    }
}

extension ServiceWideJob {
    /// How long revocation events are kept: an instance cut off from the database for longer loads the revocations
    /// afresh when it is back (``RevocationFollower/catchUp()``).
    static let revocationEventRetention = Duration.seconds(24 * 3600)

    /// Deletes revocation events older than ``revocationEventRetention``, hourly, at one instance: the ASCII bytes of
    /// `KIOSKPRN` as its lock.
    static func pruningRevocationEvents(ledger: any Ledger, database: KioskDatabase, logger: Logger) -> ServiceWideJob {
        ServiceWideJob(
            name: "prune revocation events", lockKey: 0x4B49_4F53_4B50_524E, interval: .seconds(3600),
            database: database, logger: logger
        ) {
            let pruned = try await ledger.pruneRevocationEvents(olderThan: revocationEventRetention)
            if pruned > 0 { logger.info("revocation events pruned", metadata: ["count": "\(pruned)"]) }
        }
    }
}
