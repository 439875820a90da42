import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension KioskClient {
    /// Carries out the coordinator's actions in order; a stop waits until the transfer has ended before the rest.
    func executeAwaitingStops(_ actions: [DownloadCoordinator.Action]) async {
        for action in actions {
            if case .stopTransfer(let id) = action, let task = transfers[id] {
                task.cancel()
                await task.value
            } else {
                execute([action])
            }
        }
    }

    /// Carries out the coordinator's actions in order, without waiting for a stopped transfer to end.
    func execute(_ actions: [DownloadCoordinator.Action]) {
        for action in actions {
            switch action {
            case .journal(let entries, let synchronize):
                if !entries.isEmpty { journal.append(entries) }
                if synchronize { journal.synchronize() }
            case .startTransfer(let id, let work):
                startTransfer(id, work)
            case .renewGrant(let id, let work):
                startTransfer(id, work, renewingGrant: true)
            case .install(let id, let productID, let grant):
                startInstall(id, productID: productID, grant: grant)
            case .stopTransfer(let id):
                transfers[id]?.cancel()
            case .armRetry(let id, let date):
                let clock = configuration.clock
                arm(id) { [weak self] in
                    guard (try? await clock.sleep(until: date)) != nil else { return }
                    await self?.retryDue(id)
                }
            case .armProbe(let id, let date):
                let (clock, api) = (configuration.clock, api)
                arm(id) { [weak self] in
                    guard (try? await clock.sleep(until: date)) != nil else { return }
                    let reachable = await api.isReachable()
                    guard !Task.isCancelled else { return }
                    await self?.networkProbed(id, reachable: reachable)
                }
            case .disarmTimer(let id):
                timers.removeValue(forKey: id)?.cancel()
            case .emit(let event):
                broadcaster.send(event)
            case .finishWaiters(let productID, let result):
                for waiter in installWaiters.removeValue(forKey: productID) ?? [] {
                    waiter.continuation.resume(returning: result)
                }
            case .deleteStaging(let productID):
                fileSystem.remove(layout.staging(productID: productID))
            case .deleteContent(let content):
                if !content.isOutsideCaches { fileSystem.remove(content.directory) }
            case .keepContent(let content):
                keep(content)
            case .recordMarker(let content):
                markers.record(content)
            case .forgetMarker(let productID):
                markers.forget(productID)
            case .reportDelivery(let report):
                reportDelivery(report)
            case .schedule:
                if !isClosed { execute(coordinator.schedule()) }
            }
        }
    }

    /// Replaces the download's timer with `work`.
    func arm(_ id: DownloadID, _ work: @escaping @Sendable () async -> Void) {
        timers[id]?.cancel()
        timers[id] = Task(operation: work)
    }

    func retryDue(_ id: DownloadID) {
        timers[id] = nil
        guard !isClosed else { return }
        execute(coordinator.retryDue(id))
    }

    func networkProbed(_ id: DownloadID, reachable: Bool) {
        timers[id] = nil
        guard !isClosed else { return }
        execute(coordinator.networkProbed(id, reachable: reachable, now: configuration.clock.now))
    }

    func startTransfer(_ id: DownloadID, _ work: DownloadWork, renewingGrant: Bool = false) {
        let engine = self.engine
        let hooks = EngineHooks(
            checkpoint: { [weak self, journal] changes, directory, file in
                await self?.checkpoint(id, changes, syncing: directory, file: file)
                await journal.waitForRoom()  // the journal's queue stays bounded however fast files complete
            },
            durable: { [journal] in await journal.waitUntilDurable() },
            progress: { [weak self] written, expected in
                let at = ContinuousClock.now
                Task { await self?.reportProgress(id, written: written, expected: expected, at: at) }
            })
        // Off the cooperative pool: a transfer waits for the disk (TransferExecutor).
        transfers[id] = Task.transfer { [weak self] in
            let result: Result<TransferOutcome, any Error>
            do {
                result = .success(try await engine.run(work, renewingGrant: renewingGrant, hooks: hooks))
            } catch {
                result = .failure(error)
            }
            await self?.transferEnded(id, result)
        }
    }

    /// Applies the engine's changes to the download and appends them to the journal (without waiting for the disk:
    /// the journal's group commit makes them durable together with their neighbours'). While ``close()`` waits for
    /// the transfers to stop, what they verified until then (files, chunks, how far the chunks in flight are) is
    /// still journaled.
    func checkpoint(_ id: DownloadID, _ changes: [DownloadChange], syncing directory: URL?, file: UnsyncedFile?) {
        guard !isClosed || transfers[id] != nil else { return }
        let (entries, actions) = coordinator.checkpoint(id, changes)
        guard !entries.isEmpty else { return }
        journal.append(entries, syncing: directory, file: file)
        execute(actions)
    }

    func reportProgress(_ id: DownloadID, written: Int64, expected: Int64, at instant: ContinuousClock.Instant) {
        execute(
            coordinator.progress(
                id, written: written, expected: expected, at: instant, since: epoch, now: ContinuousClock.now))
    }

    func transferEnded(_ id: DownloadID, _ result: Result<TransferOutcome, any Error>) {
        transfers[id] = nil
        guard !isClosed else { return }
        execute(coordinator.transferEnded(id, result, now: configuration.clock.now))
    }

    /// Moves the staged content into place on a task of its own, which a cancel stops like a transfer.
    func startInstall(_ id: DownloadID, productID: String, grant: Grant) {
        let installer = ContentInstaller(layout: layout, fileSystem: fileSystem)
        transfers[id] = Task.transfer { [weak self] in
            let result: Result<InstalledContent, KioskError>
            do throws(KioskError) {
                if Task.isCancelled { throw KioskError.cancelled(productID: productID) }
                result = .success(try installer.install(productID: productID, grant: grant))
            } catch {
                result = .failure(error)
            }
            await self?.installEnded(id, result)
        }
    }

    func installEnded(_ id: DownloadID, _ result: Result<InstalledContent, KioskError>) {
        transfers[id] = nil
        guard !isClosed else { return }
        execute(coordinator.installEnded(id, result))
    }
}
