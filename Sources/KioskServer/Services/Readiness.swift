import Foundation
import KioskCore
import NIOConcurrencyHelpers

/// Whether this instance can take traffic (`GET /readyz`): its database answers within ``timeout`` (its catalog is
/// loaded before the server listens at all). A load balancer stops sending requests to an instance that is not
/// ready, while `GET /healthz` keeps saying it is alive.
struct Readiness: Sendable {
    /// A check that failed: its name and what it found.
    struct Failure: Error, Equatable {
        var check: String
        var problem: String
    }

    /// Runs a cheap query on the database (`SELECT 1`); throws when it cannot.
    let pingDatabase: @Sendable () async throws -> Void
    /// The catalog, whose size the answer reports.
    let catalog: ContentCatalog
    /// How long the database may take to answer.
    var timeout: Duration = .seconds(2)

    /// What each check found, or the first that failed.
    func check() async throws(Failure) -> [String: String] {
        do {
            guard try await Self.within(timeout, pingDatabase) else {
                throw Failure(check: "database", problem: "no answer within \(timeout)")
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(check: "database", problem: "\(type(of: error))")
        }
        // The server listens only once the catalog's first load is done: this line says what it serves.
        return [
            "database": "ok", "catalog": "\(catalog.snapshot.products.count) products (load \(catalog.generation))",
        ]
    }

    /// Runs `operation` and tells whether it finished within `timeout` (rethrowing its error if it failed in time).
    /// The operation is not waited for past the timeout (nor cancelled: a driver's query may not stop on
    /// cancellation): a database that hangs cannot hang the answer.
    private static func within(
        _ timeout: Duration, _ operation: @escaping @Sendable () async throws -> Void
    ) async throws -> Bool {
        let outcome = NIOLockedValueBox<CheckedContinuation<Bool, any Error>?>(nil)
        return try await withCheckedThrowingContinuation { continuation in
            outcome.withLockedValue { $0 = continuation }
            let finish = { @Sendable (result: Result<Bool, any Error>) in
                outcome.withLockedValue { $0.take() }?.resume(with: result)
            }
            let timer = Task {
                try await Task.sleep(for: timeout)
                finish(.success(false))
            }
            Task {
                do {
                    try await operation()
                    finish(.success(true))
                } catch {
                    finish(.failure(error))
                }
                timer.cancel()
            }
        }
    }
}
