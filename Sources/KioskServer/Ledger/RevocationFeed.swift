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
