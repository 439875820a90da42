import NIOConcurrencyHelpers
import PostgresNIO

extension PostgresClient {
    /// Leases a connection for `body`, as `withConnection(_:)` does, but waits at most `timeout` for one. The pool
    /// itself waits for as long as it takes: with the database down, a request would hang until its client gave up.
    /// Only the wait is bounded: once `body` has its connection, it runs to its end.
    /// - Throws: ``KioskDatabaseError/noConnection(database:waited:)`` (named `database`, the redacted URL) when no
    ///   connection came within `timeout`; `body`'s error otherwise.
    func withConnection<T: Sendable>(
        waitingAtMost timeout: Duration, database: String,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let leased = NIOLockedValueBox(false)
        return try await withThrowingTaskGroup(of: LeaseOutcome<T>.self) { group in
            group.addTask {
                .finished(
                    try await self.withConnection { connection in
                        leased.withLockedValue { $0 = true }
                        return try await body(connection)
                    })
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return .waitedEnough
            }
            while let outcome = try await group.next() {
                switch outcome {
                case .finished(let value):
                    group.cancelAll()
                    return value
                case .waitedEnough where !leased.withLockedValue({ $0 }):
                    // Cancelling the lease takes the request out of the pool's queue.
                    group.cancelAll()
                    throw KioskDatabaseError.noConnection(database: database, waited: timeout)
                case .waitedEnough:
                    continue
                }
            }
            throw CancellationError()
        }
    }
}

/// What ends first in ``PostgresClient/withConnection(waitingAtMost:database:_:)``.
private enum LeaseOutcome<T: Sendable>: Sendable {
    /// `body` returned this.
    case finished(T)
    /// The wait's bound passed.
    case waitedEnough
}
