import Logging
import ServiceLifecycle

/// A periodic job that runs at one instance of the service at a time (``KioskDatabase/runAlone(_:_:)``), every
/// `interval`, from the first interval after start (or at start, with `runsAtStart`) until the graceful shutdown. A
/// failed run is logged and tried again at the next interval.
struct ServiceWideJob: Service {
    /// The job's name, in logs.
    let name: String
    /// Its advisory lock: one key per job (the ASCII bytes of 8 letters, like ``SchemaMigrations/lockKey``).
    let lockKey: Int64
    let interval: Duration
    let database: KioskDatabase
    let logger: Logger
    /// Whether the first run is at start rather than after the first interval.
    var runsAtStart = false
    /// The job itself; it must be idempotent.
    let body: @Sendable () async throws -> Void

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var first = true
            while !Task.isCancelled {
                do {
                    if !(first && runsAtStart) { try await Task.sleep(for: interval) }
                    first = false
                    let ran = try await database.runAlone(lockKey, body)
                    logger.debug("service-wide job", metadata: ["job": "\(name)", "ran_here": "\(ran)"])
                } catch is CancellationError {
                    return
                } catch {
                    logger.warning(
                        "service-wide job failed; trying again later",
                        metadata: ["job": "\(name)", "reason": "\(KioskDatabaseError.reason(error))"])
                }
            }
        }
    }
}
