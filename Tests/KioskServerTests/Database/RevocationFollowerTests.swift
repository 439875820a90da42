import Foundation
import Testing

@testable import KioskServer

/// Revocations recorded at one instance reach the ``RevocationList`` of another sharing the database: through
/// `ledger_revocation_events`, replayed by a ``RevocationFollower`` that ``KioskDatabase/follow(_:every:_:)`` wakes
/// (PostgreSQL: `LISTEN`/`NOTIFY`, and a replay each time the listening connection is made again; SQLite: polling).
@Suite("Revocations across instances")
struct RevocationFollowerTests {
    /// A paid transaction of a non-consumable, recorded at `date`.
    static func purchase(_ id: String, at date: Date) -> LedgerTransaction {
        LedgerTransaction(
            transactionID: id, originalTransactionID: id, productID: "com.example.book", environment: "Sandbox",
            bundleID: "com.example.app", purchaseDate: date, expiresDate: nil, cancellationDate: nil, quantity: 1,
            verifiedAt: date)
    }

    /// Runs `body` with instance A's ledger and instance B's list, kept in step by B's follower woken as
    /// ``KioskDatabase/follow(_:every:_:)`` does with `interval`, on one fresh database on `engine`.
    static func withFollowingInstance(
        _ engine: KioskDatabase.Engine, interval: Duration,
        _ body: (_ ledgerA: SQLLedger, _ listB: RevocationList, _ url: DatabaseURL) async throws -> Void
    ) async throws {
        try await TestDatabase.withURL(engine) { url in
            try await TestDatabase.withOpened(url) { first in
                try await TestDatabase.withOpened(url) { second in
                    let (list, follower) = try await RevocationFollower.start(
                        ledger: SQLLedger(database: second), logger: TestDatabase.logger)
                    let following = Task {
                        await second.follow(.revocations, every: interval) { await follower.catchUp() }
                    }
                    defer { following.cancel() }
                    try await body(SQLLedger(database: first), list, url)
                    following.cancel()
                    await following.value
                }
            }
        }
    }

    /// Waits, a bounded number of times, for `condition`; how long it took, nil if it never held (10 s).
    static func timeUntil(_ condition: () -> Bool) async throws -> Duration? {
        let start = ContinuousClock.now
        for _ in 0..<1_000 {
            if condition() { return ContinuousClock.now - start }
            try await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// On PostgreSQL, the poll is an hour: only the notification can bring the change, so this shows that
    /// `NOTIFY` wakes the follower. On SQLite, the poll (250 ms as served) is the way.
    @Test(arguments: TestDatabase.engines)
    func aRefundAtOneInstanceStopsTokensAtAnother(engine: KioskDatabase.Engine) async throws {
        let interval = engine == .postgres ? Duration.seconds(3600) : RevocationFeed.pollInterval(for: .sqlite)
        try await Self.withFollowingInstance(engine, interval: interval) { ledger, list, _ in
            let now = Date()
            try await ledger.record([Self.purchase("t1", at: now), Self.purchase("t2", at: now)])
            #expect(try await ledger.revoke(transactionID: "t1", at: now, scope: .purchase) != nil)
            let revoked = try await Self.timeUntil { list.refuses(transactionID: "t1", originalTransactionID: "t1") }
            #expect(revoked != nil, "the revocation never reached the other instance")
            print("revocation lag across instances (\(engine)): \(revoked.map(String.init(describing:)) ?? "never")")
            #expect(!list.contains("t2"))

            // A reversal lifts it there too.
            #expect(try await ledger.reinstate(transactionID: "t1", at: now.addingTimeInterval(1)) != nil)
            let lifted = try await Self.timeUntil { !list.refuses(transactionID: "t1", originalTransactionID: "t1") }
            #expect(lifted != nil, "the reversal never reached the other instance")
        }
    }

    /// A revocation recorded while B's listening connection is down (connections to the database refused) is
    /// replayed when B makes it again: PostgreSQL dropped the notification, the events table kept the change.
    @Test(
        .enabled(if: TestDatabase.isPostgresConfigured, "KIOSK_TEST_POSTGRES_URL not set: PostgreSQL only"))
    func aRevocationMissedWhileDisconnectedIsReplayedOnReconnection() async throws {
        try await Self.withFollowingInstance(.postgres, interval: .seconds(3600)) { ledger, list, url in
            guard case .postgres(let database) = url.location else { return }
            let server = try TestDatabase.postgresServer()
            let now = Date()
            try await ledger.record([Self.purchase("t1", at: now), Self.purchase("t2", at: now)])
            // A first revocation, through the notification: B listens, and A's pool holds a connection.
            _ = try await ledger.revoke(transactionID: "t1", at: now, scope: .purchase)
            #expect(try await Self.timeUntil { list.contains("t1") } != nil)

            try await TestDatabase.administer(server, "ALTER DATABASE \(database.database) ALLOW_CONNECTIONS false")
            try await TestDatabase.administer(
                server,
                """
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = '\(database.database)' AND application_name = 'kiosk-listener'
                """)
            _ = try await ledger.revoke(transactionID: "t2", at: now, scope: .purchase)
            #expect(!list.contains("t2"), "nothing could have told B yet")

            try await TestDatabase.administer(server, "ALTER DATABASE \(database.database) ALLOW_CONNECTIONS true")
            let replayed = try await Self.timeUntil { list.contains("t2") }
            #expect(replayed != nil, "the revocation missed while disconnected was never replayed")
            print("revocation lag after the listening connection came back: \(String(describing: replayed))")
        }
    }

    /// Events are numbered in commit order and each carries the revocation in force when read; nothing changed, no
    /// event (a receipt verified again does not write one).
    @Test(arguments: TestDatabase.engines)
    func eventsAreWrittenOnlyForChanges(engine: KioskDatabase.Engine) async throws {
        try await TestDatabase.with(engine) { database in
            let ledger = SQLLedger(database: database)
            let now = Date()
            try await ledger.record([Self.purchase("t1", at: now)])
            #expect(try await ledger.latestRevocationEvent() == 0)
            _ = try await ledger.revoke(transactionID: "t1", at: now, scope: .transaction)
            _ = try await ledger.revoke(transactionID: "t1", at: now, scope: .transaction)
            #expect(try await ledger.revocationEvents(after: 0, limit: 10).count == 1, "the second changed nothing")
            _ = try await ledger.revoke(transactionID: "t1", at: now, scope: .purchase)
            _ = try await ledger.reinstate(transactionID: "t1", at: now.addingTimeInterval(1))
            _ = try await ledger.revoke(transactionID: "unknown", at: now, scope: .purchase)
            let events = try await ledger.revocationEvents(after: 0, limit: 10)
            #expect(events.map(\.transactionID) == ["t1", "t1", "t1"])
            #expect(events.map(\.number) == events.map(\.number).sorted())
            #expect(events.allSatisfy { $0.revocation == nil }, "each carries the state now: lifted")
            #expect(try await ledger.revocationEvents(after: events[1].number, limit: 10).count == 1)
            #expect(try await ledger.latestRevocationEvent() == events[2].number)

            // A cancellation recorded from a store answer is scoped by the revoke that follows it: one event.
            var refunded = Self.purchase("t3", at: now)
            refunded.cancellationDate = now
            try await ledger.record([refunded])
            _ = try await ledger.revoke(transactionID: "t3", at: now, scope: .purchase)
            let newer = try await ledger.revocationEvents(after: events[2].number, limit: 10)
            #expect(newer.map(\.transactionID) == ["t3"])
        }
    }

    /// Events older than the retention are pruned; an instance whose last event is older than the pruned ones (cut
    /// off from the database meanwhile) loads the revocations afresh instead of replaying a log with a hole.
    @Test(arguments: TestDatabase.engines)
    func anInstanceBehindPrunedEventsLoadsTheRevocationsAfresh(engine: KioskDatabase.Engine) async throws {
        try await LedgerAcrossInstancesTests.withTwoInstances(engine) { first, second in
            let ledger = SQLLedger(database: first)
            let now = Date()
            try await ledger.record([Self.purchase("t1", at: now), Self.purchase("t2", at: now)])
            let (list, follower) = try await RevocationFollower.start(
                ledger: SQLLedger(database: second), logger: TestDatabase.logger)
            // B is away: A revokes t1 and reverses nothing; the events age past the retention and are pruned.
            _ = try await ledger.revoke(transactionID: "t1", at: now, scope: .purchase)
            #expect(try await ledger.pruneRevocationEvents(olderThan: .seconds(3600)) == 0, "too young to prune")
            try await first.sql.raw("UPDATE ledger_revocation_events SET recorded_at_ms = 0").run()
            #expect(try await ledger.pruneRevocationEvents(olderThan: .seconds(3600)) == 1)
            #expect(try await ledger.revocationEvents(after: 0, limit: 10).isEmpty)
            #expect(try await ledger.revocationEventsPrunedThrough() > 0)

            await follower.catchUp()
            #expect(list.contains("t1"), "loaded afresh: the pruned revocation is known")
            #expect(!list.contains("t2"))
            #expect(await follower.lastEvent == (try await ledger.latestRevocationEvent()))

            // From there it follows events again.
            _ = try await ledger.revoke(transactionID: "t2", at: now, scope: .purchase)
            await follower.catchUp()
            #expect(list.contains("t2"))
        }
    }

    /// A service-wide job runs at one instance at a time on PostgreSQL (a session advisory lock tried): while one
    /// instance runs it, another's attempt returns at once without running it; afterwards the other may.
    @Test(.enabled(if: TestDatabase.isPostgresConfigured, "KIOSK_TEST_POSTGRES_URL not set: PostgreSQL only"))
    func aServiceWideJobRunsAtOneInstanceAtATime() async throws {
        try await LedgerAcrossInstancesTests.withTwoInstances(.postgres) { first, second in
            let key: Int64 = 0x4B49_4F53_4B54_5354
            let ranInside = try await first.runAlone(key) {
                let other = try await second.runAlone(key) { Issue.record("ran at both instances at once") }
                #expect(!other)
            }
            #expect(ranInside)
            #expect(try await second.runAlone(key) {})
        }
    }
}
