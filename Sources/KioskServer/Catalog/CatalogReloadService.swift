import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

/// Picks up content changes without a restart: reloads the catalog on SIGHUP (when asked to trap it) and, when an
/// interval is set, whenever a cheap scan finds a changed `Info.json` or file (the hash cache keeps reloads cheap).
struct CatalogReloadService: Service {
    let catalog: ContentCatalog
    let interval: Duration
    let trapSIGHUP: Bool
    let logger: Logger

    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            if trapSIGHUP {
                group.addTask {
                    for await _ in await UnixSignalsSequence(trapping: .sighup) {
                        logger.info("SIGHUP: reloading the catalog")
                        await catalog.reload()
                    }
                }
            }
            if interval > .zero {
                group.addTask {
                    while !Task.isCancelled {
                        do { try await Task.sleep(for: interval) } catch { return }
                        await catalog.reloadIfChanged()
                    }
                }
            }
            group.addTask {
                // Runs until the service group shuts down, then stops the watchers.
                try? await gracefulShutdown()
            }
            await group.next()
            group.cancelAll()
        }
    }
}
