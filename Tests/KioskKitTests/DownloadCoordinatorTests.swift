import Foundation
import KioskCore
import Testing

@testable import KioskKit

/// Carries out a coordinator's actions the way ``KioskClient`` does, but into a log of short lines: `.schedule`
/// asks the coordinator again, everything else is written down in order.
struct MockExecutor {
    var coordinator: DownloadCoordinator
    var log: [String] = []
    var journal: [JournalEntry] = []
    var running: Set<DownloadID> = []

    mutating func run(_ actions: [DownloadCoordinator.Action]) {
        for action in actions {
            switch action {
            case .journal(let entries, let synchronize):
                journal += entries
                for entry in entries { log.append("journal \(Self.describe(entry))") }
                if synchronize { log.append("sync") }
            case .startTransfer(let id, let work):
                running.insert(id)
                log.append("start \(work.productID)")
            case .renewGrant(let id, let work):
                running.insert(id)
                log.append("renew \(work.productID)")
            case .install(let id, let productID, let grant):
                running.insert(id)
                log.append("install \(productID) \(grant.contentVersion)")
            case .stopTransfer(let id):
                running.remove(id)
                log.append("stop \(name(id))")
            case .armRetry(let id, let date):
                log.append("arm \(name(id)) +\(Int(date.timeIntervalSince(DownloadCoordinatorTests.now)))s")
            case .armProbe(let id, let date):
                log.append("probe \(name(id)) +\(Int(date.timeIntervalSince(DownloadCoordinatorTests.now)))s")
            case .disarmTimer(let id):
                log.append("disarm \(name(id))")
            case .emit(let event):
                switch event {
                case .stateChanged(let snapshot): log.append("state \(snapshot.productID) \(snapshot.state.name)")
                case .progress(let snapshot):
                    log.append("progress \(snapshot.productID) \(snapshot.progress.bytesWritten)")
                case .installed(let content): log.append("installed \(content.productID)")
                case .removed(let productID, _): log.append("removed \(productID)")
                }
            case .finishWaiters(let productID, let result):
                switch result {
                case .success: log.append("waiters \(productID) ok")
                case .failure(let error): log.append("waiters \(productID) \(error.code)")
                }
            case .deleteStaging(let productID): log.append("delete staging \(productID)")
            case .deleteContent(let content): log.append("delete content \(content.productID) \(content.version)")
            case .keepContent(let content): log.append("keep content \(content.productID) \(content.version)")
            case .recordMarker(let content): log.append("marker \(content.productID)")
            case .forgetMarker(let productID): log.append("forget marker \(productID)")
            case .reportDelivery(let report): log.append("report \(report.productID) \(report.contentVersion)")
            case .schedule: run(coordinator.schedule())
            }
        }
    }

    /// Runs an event and returns the log lines it produced.
    mutating func event(_ body: (inout DownloadCoordinator) -> [DownloadCoordinator.Action]) -> [String] {
        let start = log.count
        let actions = body(&coordinator)
        run(actions)
        return Array(log[start...])
    }

    @discardableResult
    mutating func enqueue(_ productID: String) -> DownloadID {
        let (id, actions) = coordinator.enqueue(
            productID: productID, proof: .receipt("cmVjZWlwdA=="), priority: .normal, now: DownloadCoordinatorTests.now)
        run(actions)
        return id
    }

    func name(_ id: DownloadID) -> String { coordinator.downloads[id]?.productID ?? "?" }

    /// The transfer of `id` ends with every file of a grant for `version` staged: the download is verified and its
    /// content moved into place (``DownloadCoordinator/installEnded(_:_:)`` is the caller's). Returns the log lines
    /// of the end of the transfer.
    @discardableResult
    mutating func stage(_ id: DownloadID, version: String = "1.0") -> [String] {
        let productID = name(id)
        let grant = Grant(
            productID: productID, contentVersion: version, totalLength: 10, expiresAt: Date().addingTimeInterval(600),
            token: "t", files: [])
        run(coordinator.checkpoint(id, [.grant(grant, receivedAt: Date())]).1)
        return event { $0.transferEnded(id, .success(.staged), now: DownloadCoordinatorTests.now) }
    }

    /// Stages `content` and moves it into place; returns the log lines of the install's end.
    @discardableResult
    mutating func install(_ id: DownloadID, _ content: InstalledContent) -> [String] {
        stage(id, version: content.version)
        return event { $0.installEnded(id, .success(content)) }
    }

    static func describe(_ entry: JournalEntry) -> String {
        switch entry {
        case .created(let record): "created \(record.productID)"
        case .state(_, let state, let attempt): "state \(state.name) \(attempt)"
        case .proof: "proof"
        case .changed(_, let change):
            switch change {
            case .grant(let grant, _): "grant \(grant?.contentVersion ?? "none")"
            case .verified(let path, _): "verified \(path)"
            case .entityTag: "etag"
            case .integrityFailures: "failures"
            case .discarded: "discarded"
            case .chunkVerified(let path, let index, _): "chunk \(index) of \(path)"
            case .chunkProgress(let path, let prefix): "chunk \(prefix.index) of \(path) up to \(prefix.bytes)"
            }
        case .forgotten: "forgotten"
        case .installed(let content): "installed \(content.productID) \(content.version)"
        case .removed(let productID): "removed \(productID)"
        case .keepsPrevious: "keeps previous"
        }
    }
}

@Suite("DownloadCoordinator")
struct DownloadCoordinatorTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    let policy = RetryPolicy(baseDelay: 1, maximumDelay: 60, maximumAttempts: 3)
    let network = KioskError.network(code: -1005, underlying: "lost")
    let busy = KioskError.server(status: 503, code: "server_error", message: "Busy.", retryAfter: nil)

    func executor(slots: Int = 1, snapshot: JournalSnapshot = JournalSnapshot()) -> MockExecutor {
        MockExecutor(
            coordinator: DownloadCoordinator(
                snapshot: snapshot, queue: DownloadQueue(maximumConcurrent: slots), retryPolicy: policy,
                progressInterval: .milliseconds(100), grantLimits: GrantLimits()))
    }

    func content(_ productID: String, version: String = "1.0") -> InstalledContent {
        InstalledContent(
            productID: productID, version: version,
            directory: URL(fileURLWithPath: "/tmp/kiosk-tests/Content/\(productID)/\(version)"),
            files: [InstalledFile(path: "a.bin", length: 10, sha256: String(repeating: "0", count: 64))],
            installedAt: Self.now)
    }

    @Test func enqueueStartsWithinTheQueueSlotsAndAnInstallStartsTheNext() {
        var executor = executor(slots: 1)
        let first = executor.enqueue("p1")
        executor.enqueue("p2")
        #expect(
            executor.log == [
                "journal created p1", "state p1 waiting", "journal state active 0", "state p1 active", "start p1",
                "journal created p2", "state p2 waiting",
            ])
        #expect(executor.stage(first) == ["journal state verifying 0", "state p1 verifying", "install p1 1.0"])
        let lines = executor.event { $0.installEnded(first, .success(content("p1"))) }
        #expect(
            lines == [
                "marker p1", "journal installed p1 1.0", "report p1 1.0", "journal state finished 0",
                "state p1 finished", "sync", "installed p1", "waiters p1 ok", "journal state active 0",
                "state p2 active", "start p2",
            ])
        #expect(executor.coordinator.installed["p1"]?.version == "1.0")
    }

    @Test func pauseStopsTheTransferBeforeOfferingTheSlot() {
        var executor = executor(slots: 1)
        let first = executor.enqueue("p1")
        executor.enqueue("p2")
        let lines = executor.event { $0.pause(first, reason: .user) }
        #expect(
            lines == [
                "journal state paused 0", "state p1 paused", "stop p1", "journal state active 0",
                "state p2 active", "start p2",
            ])
        #expect(executor.running.map(executor.name) == ["p2"])
    }

    @Test func aTransientFailureArmsARetryAndProgressResetsTheAttemptCount() {
        var executor = executor()
        let id = executor.enqueue("p1")
        let failed = executor.event { $0.transferEnded(id, .failure(busy), now: Self.now) }
        #expect(failed.first == "journal state waiting_to_retry 1")
        #expect(failed.contains("arm p1 +1s") || failed.contains("arm p1 +0s"))
        let due = executor.event { $0.retryDue(id) }
        #expect(
            due == [
                "journal state waiting 1", "state p1 waiting", "disarm p1", "journal state active 1", "state p1 active",
                "start p1",
            ])
        // Bytes that grow are progress: the attempt count starts over (journaled), and an event goes out.
        let epoch = ContinuousClock.now
        let lines = executor.event {
            $0.progress(
                id, written: 1_000, expected: 10_000, at: epoch + .seconds(1), since: epoch, now: epoch + .seconds(1))
        }
        #expect(lines == ["journal state active 0", "progress p1 1000"])
        #expect(executor.coordinator.downloads[id]?.machine.attempt == 0)
    }

    @Test func attemptsWithoutProgressExhaustTheRetriesAndTellTheWaiters() {
        var executor = executor()
        let id = executor.enqueue("p1")
        var last: [String] = []
        for _ in 0..<3 {
            last = executor.event { $0.transferEnded(id, .failure(busy), now: Self.now) }
            _ = executor.event { $0.retryDue(id) }
        }
        #expect(last.contains("waiters p1 server_error"))
        #expect(executor.coordinator.downloads[id]?.state.name == "failed")
    }

    /// Two downloads lose the server: each waits for the network with a probe of its own, and failed probes change
    /// nothing (no journal, no event); the first probe that reaches the server sends both on, and disarms the
    /// other's probe. The waiters go on waiting throughout.
    @Test func aProbeThatReachesTheServerSendsEveryDownloadWaitingForTheNetworkOn() {
        var executor = executor(slots: 2)
        let first = executor.enqueue("p1")
        let second = executor.enqueue("p2")
        let lost = executor.event { $0.transferEnded(first, .failure(network), now: Self.now) }
        #expect(lost.prefix(2) == ["journal state waiting_for_network 1", "state p1 waiting_for_network"])
        #expect(lost.contains { $0.hasPrefix("probe p1 +") })
        _ = executor.event { $0.transferEnded(second, .failure(network), now: Self.now) }
        #expect(executor.coordinator.installWait(for: "p1") == .wait)
        let stillDown = executor.event { $0.networkProbed(first, reachable: false, now: Self.now) }
        #expect(stillDown.count == 1 && stillDown[0].hasPrefix("probe p1 +"))
        let back = executor.event { $0.networkProbed(second, reachable: true, now: Self.now) }
        #expect(
            back == [
                "journal state waiting 1", "state p1 waiting", "disarm p1", "journal state waiting 1",
                "state p2 waiting", "disarm p2", "journal state active 1", "state p1 active", "start p1",
                "journal state active 1", "state p2 active", "start p2",
            ])
    }

    let expired = KioskError.server(status: 401, code: "token_expired", message: "Expired.", retryAfter: nil)

    /// The transfer of `id` ends because it needs a new grant.
    func grantNeeded(_ reason: GrantNeed, _ id: DownloadID, _ executor: inout MockExecutor) -> [String] {
        executor.event { $0.transferEnded(id, .success(.needsNewGrant(reason)), now: Self.now) }
    }

    @Test func grantRenewalsWithoutAVerifiedFileExhaustAfterTheLimitThenFailTheTransfer() {
        var executor = executor()
        let id = executor.enqueue("p1")
        for _ in 0..<DownloadStateMachine.maximumRenewalsWithoutProgress {
            // Still active, nothing journaled: the transfer starts again, asking for a grant first.
            #expect(grantNeeded(.refused(expired), id, &executor) == ["renew p1"])
        }
        #expect(executor.coordinator.downloads[id]?.machine.renewalsWithoutProgress == 4)
        // One more: the server's error fails the transfer (a 401 is not transient).
        let lines = grantNeeded(.refused(expired), id, &executor)
        #expect(lines == ["journal state failed 0", "state p1 failed", "waiters p1 token_expired"])
        #expect(executor.coordinator.downloads[id]?.state == .failed(expired))
    }

    @Test func aVerifiedFileOrChunkStartsTheRenewalsOverAndSoDoesANewTransfer() {
        var executor = executor()
        let id = executor.enqueue("p1")
        for _ in 0..<4 { _ = grantNeeded(.refused(expired), id, &executor) }
        executor.run(executor.coordinator.checkpoint(id, [.verified(path: "a.bin")]).1)
        #expect(executor.coordinator.downloads[id]?.machine.renewalsWithoutProgress == 0)
        // A verified chunk is progress too: a large file whose chunks keep coming between renewals goes on.
        for _ in 0..<4 { _ = grantNeeded(.refused(expired), id, &executor) }
        executor.run(executor.coordinator.checkpoint(id, [.chunkVerified(path: "c.bin", index: 0)]).1)
        #expect(executor.coordinator.downloads[id]?.machine.renewalsWithoutProgress == 0)
        for _ in 0..<4 { #expect(grantNeeded(.refused(expired), id, &executor) == ["renew p1"]) }
        // A mismatch past the limit is a transient failure: a retry after a backoff, whose transfer starts over.
        let failed = grantNeeded(.contentMismatch(path: "b.bin"), id, &executor)
        #expect(failed.first == "journal state waiting_to_retry 1")
        #expect(
            executor.coordinator.downloads[id]?.state.name == "waiting_to_retry"
                && failed.contains { $0.hasPrefix("arm p1") })
        _ = executor.event { $0.retryDue(id) }
        #expect(executor.coordinator.downloads[id]?.machine.renewalsWithoutProgress == 0)
        #expect(grantNeeded(.refused(expired), id, &executor) == ["renew p1"])
    }

    @Test func aNeedForAGrantAfterAPauseChangesNothing() {
        var executor = executor()
        let id = executor.enqueue("p1")
        _ = executor.event { $0.pause(id, reason: .user) }
        #expect(grantNeeded(.refused(expired), id, &executor).isEmpty)
        #expect(executor.coordinator.downloads[id]?.state == .paused(.user))
    }

    /// The engine counts hash failures (``IntegrityCounts``) and journals a file's count through a checkpoint: it is
    /// journaled and kept for the next transfer, and it is not progress (the attempt count stays).
    @Test func aFileThatFailsItsHashIsRenewedOnceThenIsAnIntegrityErrorNamingIt() {
        var executor = executor()
        let id = executor.enqueue("p1")
        _ = executor.event { $0.transferEnded(id, .failure(busy), now: Self.now) }
        _ = executor.event { $0.retryDue(id) }
        let counted = executor.event { $0.checkpoint(id, [.integrityFailures(path: "Contents/a.bin", count: 1)]).1 }
        #expect(counted.isEmpty)  // the journal line is the executor's (with the checkpoint's files)
        #expect(executor.coordinator.downloads[id]?.machine.attempt == 1)
        // The engine then ends the run for a new grant (the file may have changed on the server).
        var renewedWork: DownloadWork?
        let lines = executor.event { coordinator in
            let actions = coordinator.transferEnded(
                id, .success(.needsNewGrant(.contentMismatch(path: "Contents/a.bin"))), now: Self.now)
            for case .renewGrant(_, let work) in actions { renewedWork = work }
            return actions
        }
        #expect(lines == ["renew p1"])
        #expect(renewedWork?.integrityFailures["Contents/a.bin"] == 1)
        // The second mismatch of the file: an integrity error naming it ends the transfer, and fails the download.
        let error = KioskError.integrity(
            productID: "p1", path: "Contents/a.bin", expectedSHA256: "00", actualSHA256: "11")
        let failed = executor.event { $0.transferEnded(id, .failure(error), now: Self.now) }
        #expect(failed == ["journal state failed 1", "state p1 failed", "waiters p1 integrity"])
    }

    /// A transfer that ends after its download was paused or cancelled (the stop was asked for; the task had not
    /// seen it yet) changes nothing, however it ended.
    @Test(arguments: [
        Result<TransferOutcome, any Error>.success(.staged),
        .success(.needsNewGrant(.contentMismatch(path: "a.bin"))),
        .failure(KioskError.server(status: 503, code: "server_error", message: "Busy.", retryAfter: nil)),
        .failure(CancellationError()),
    ])
    func aTransferThatEndsAfterAPauseOrACancelChangesNothing(_ result: Result<TransferOutcome, any Error>) {
        for cancels in [false, true] {
            var executor = executor()
            let id = executor.enqueue("p1")
            let stop = executor.event { cancels ? $0.cancel(id) : $0.pause(id, reason: .user) }
            #expect(stop.contains("stop p1"))
            let state = executor.coordinator.downloads[id]?.state
            #expect(executor.event { $0.transferEnded(id, result, now: Self.now) }.isEmpty)
            #expect(executor.coordinator.downloads[id]?.state == state)
        }
    }

    @Test func progressEventsAreThrottledAndLateSamplesDropped() {
        var executor = executor()
        let id = executor.enqueue("p1")
        let epoch = ContinuousClock.now
        func report(_ bytes: Int64, sample: Int, now: Int) -> [String] {
            executor.event {
                $0.progress(
                    id, written: bytes, expected: 1_000, at: epoch + .milliseconds(sample), since: epoch,
                    now: epoch + .milliseconds(now))
            }
        }
        #expect(report(100, sample: 10, now: 10) == ["progress p1 100"])
        #expect(report(200, sample: 50, now: 50) == [])  // within 100 ms of the last event
        #expect(report(150, sample: 40, now: 60) == [])  // sampled before the last one applied: dropped
        #expect(executor.coordinator.downloads[id]?.progress.bytesWritten == 200)
        #expect(report(300, sample: 120, now: 120) == ["progress p1 300"])
        #expect(report(1_000, sample: 130, now: 130) == ["progress p1 1000"])  // complete: always sent
    }

    @Test func cancelStopsThenDeletesAndLateCheckpointsAreIgnored() {
        var executor = executor()
        let id = executor.enqueue("p1")
        let grant = Grant(
            productID: "p1", contentVersion: "1.0", totalLength: 10, expiresAt: Self.now, token: "t",
            files: [
                GrantFile(
                    path: "a.bin", length: 10, sha256: String(repeating: "0", count: 64),
                    url: "/v1/content/p1/1.0/a.bin")
            ])
        let (entries, _) = executor.coordinator.checkpoint(id, [.grant(grant, receivedAt: Self.now)])
        #expect(entries.count == 1)
        let lines = executor.event { $0.cancel(id) }
        #expect(
            lines == [
                "journal state cancelled 0", "state p1 cancelled", "stop p1", "delete staging p1",
                "journal grant none", "waiters p1 cancelled",
            ])
        let (late, actions) = executor.coordinator.checkpoint(id, [.verified(path: "a.bin")])
        #expect(late.isEmpty && actions.isEmpty)
        #expect(executor.coordinator.downloads[id]?.record.grant == nil)
        // A second cancel changes nothing.
        #expect(executor.event { $0.cancel(id) }.isEmpty)
    }

    @Test func enqueueAfterCancelOrInstallStartsANewDownloadAndForgetsTheOld() {
        var executor = executor()
        let first = executor.enqueue("p1")
        _ = executor.event { $0.cancel(first) }
        let second = executor.enqueue("p1")
        #expect(second != first)
        #expect(executor.coordinator.downloads[first] == nil)
        #expect(executor.journal.contains { if case .forgotten(first) = $0 { true } else { false } })
        // Enqueueing a live download again resumes it instead.
        _ = executor.event { $0.pause(second, reason: .user) }
        #expect(executor.enqueue("p1") == second)
        #expect(executor.coordinator.downloads[second]?.state == .active)
    }

    @Test func aStopThatEndsWithCancellationChangesNothing() {
        var executor = executor()
        let id = executor.enqueue("p1")
        _ = executor.event { $0.pause(id, reason: .user) }
        let lines = executor.event { $0.transferEnded(id, .failure(CancellationError()), now: Self.now) }
        #expect(lines.isEmpty)
        #expect(executor.coordinator.downloads[id]?.state == .paused(.user))
    }

    @Test func aFailedInstallFailsTheDownload() {
        var executor = executor()
        let id = executor.enqueue("p1")
        executor.stage(id)
        let vanished = KioskError.fileSystem(path: "a.bin", underlying: "the verified file vanished before install")
        let lines = executor.event { $0.installEnded(id, .failure(vanished)) }
        #expect(lines == ["journal state failed 0", "state p1 failed", "waiters p1 file_system"])
    }

    @Test func contentMovedIntoPlaceAfterACancelIsDeleted() {
        var executor = executor()
        let id = executor.enqueue("p1")
        executor.stage(id)
        #expect(executor.event { $0.cancel(id) }.contains("stop p1"))
        let lines = executor.event { $0.installEnded(id, .success(content("p1"))) }
        #expect(lines == ["delete content p1 1.0"])
        #expect(executor.coordinator.installed["p1"] == nil)
    }

    @Test func contentFoundInstalledAndCurrentFinishesTheDownloadWithoutAnInstall() {
        var executor = executor()
        let id = executor.enqueue("p1")
        let lines = executor.event { $0.transferEnded(id, .success(.alreadyInstalled(content("p1"))), now: Self.now) }
        #expect(
            lines == [
                "marker p1", "journal installed p1 1.0", "journal state finished 0", "state p1 finished", "sync",
                "installed p1", "waiters p1 ok",
            ])
    }

    @Test func aRelaunchRestartsWhatWasRunningAndKeepsWhatWasPaused() {
        var snapshot = JournalSnapshot()
        for (index, (product, state)) in [("p1", DownloadState.active), ("p2", .paused(.user))].enumerated() {
            var record = DownloadRecord(
                id: DownloadID(), productID: product, receipt: "cmVjZWlwdA==", signedTransaction: nil,
                priority: .normal, sequence: UInt64(index), state: state, attempt: 0, grant: nil, entityTags: [:],
                verifiedPaths: [], integrityFailures: [:], createdAt: Self.now)
            record.state = state
            snapshot.downloads.append(record)
        }
        snapshot.nextSequence = 2
        var executor = executor(slots: 2, snapshot: snapshot)
        #expect(executor.coordinator.journalSnapshot.downloads.map(\.state.name) == ["waiting", "paused"])
        let lines = executor.event { $0.schedule() }
        #expect(lines == ["journal state active 0", "state p1 active", "start p1"])
    }

    @Test func vanishedContentForgetsItsFinishedDownload() {
        var executor = executor()
        let id = executor.enqueue("p1")
        executor.install(id, content("p1"))
        let lines = executor.event { $0.contentVanished([content("p1")], partial: []) }
        #expect(lines == ["journal removed p1", "journal forgotten", "removed p1"])
        #expect(executor.coordinator.downloads.isEmpty && executor.coordinator.installed.isEmpty)
    }

    @Test func aNewVersionReplacesTheOldOneOnDisk() {
        var executor = executor()
        let first = executor.enqueue("p1")
        executor.install(first, content("p1"))
        let second = executor.enqueue("p1")
        executor.stage(second, version: "2.0")
        let lines = executor.event { $0.installEnded(second, .success(content("p1", version: "2.0"))) }
        #expect(lines.first == "delete content p1 1.0")
        #expect(executor.coordinator.installed["p1"]?.version == "2.0")
    }

    @Test func anUpdateAskedToKeepThePreviousVersionJournalsTheRequestAndKeepsIt() {
        var executor = executor()
        let first = executor.enqueue("p1")
        executor.install(first, content("p1"))
        let second = executor.enqueue("p1")
        // Asked while the update runs: journaled with the download, once.
        let proof = PurchaseProof.receipt("cmVjZWlwdA==")
        let asked = executor.event {
            $0.enqueue(productID: "p1", proof: proof, priority: .normal, keepingPrevious: true, now: Self.now).1
        }
        #expect(asked.contains("journal keeps previous"))
        let again = executor.event {
            $0.enqueue(productID: "p1", proof: proof, priority: .normal, keepingPrevious: true, now: Self.now).1
        }
        #expect(!again.contains("journal keeps previous"))
        #expect(executor.coordinator.journalSnapshot.downloads.first { $0.id == second }?.keepsPrevious == true)
        // Replayed from the journal's entries (a relaunch), the download still keeps the previous version.
        var replayed = JournalSnapshot()
        for entry in executor.journal { replayed.apply(entry) }
        #expect(replayed.downloads.first { $0.id == second }?.keepsPrevious == true)
        executor.stage(second, version: "2.0")
        let lines = executor.event { $0.installEnded(second, .success(content("p1", version: "2.0"))) }
        #expect(lines.first == "keep content p1 1.0")
        #expect(!lines.contains { $0.hasPrefix("delete content") })
        #expect(executor.coordinator.installed["p1"]?.version == "2.0")
    }

    @Test func aFullDiskKeepsItsByteCountsEndsTheWaitsAndStaysResumable() {
        var executor = executor()
        let id = executor.enqueue("p1")
        #expect(executor.coordinator.installWait(for: "p1") == .wait)
        let full = KioskError.insufficientStorage(needed: 5_000, available: 1_000)
        let lines = executor.event { $0.transferEnded(id, .failure(full), now: Self.now) }
        #expect(lines == ["journal state paused 0", "state p1 paused", "waiters p1 insufficient_storage"])
        #expect(executor.coordinator.downloads[id]?.snapshot.error == full)
        // A waiter arriving now gets the error at once; the download stays paused and resumable.
        #expect(executor.coordinator.installWait(for: "p1") == .fail(full))
        let resumed = executor.event { $0.resume(id) }
        #expect(resumed.suffix(2) == ["state p1 active", "start p1"])
        #expect(executor.coordinator.downloads[id]?.snapshot.error == nil)
        #expect(executor.coordinator.installWait(for: "p1") == .wait)
        // A pause by the user is not a dead end: waiters keep waiting.
        #expect(!executor.event { $0.pause(id, reason: .user) }.contains { $0.hasPrefix("waiters") })
        #expect(executor.coordinator.installWait(for: "p1") == .wait)
    }

    @Test func aStoragePauseAfterARelaunchReportsTheBytesStillToFetch() {
        let snapshot = DownloadSnapshot(
            productID: "p1", state: .paused(.insufficientStorage),
            progress: DownloadProgress(bytesWritten: 3_000, bytesExpected: 10_000))
        #expect(snapshot.error == .insufficientStorage(needed: 7_000, available: nil))
        #expect(DownloadSnapshot(productID: "p1", state: .paused(.user)).error == nil)
    }

    @Test func waitsEndWithTheOutcomeOfTheLatestDownload() {
        var executor = executor()
        #expect(executor.coordinator.installWait(for: "p1") == .fail(.notFound(productID: "p1")))
        let id = executor.enqueue("p1")
        _ = executor.event { $0.cancel(id) }
        #expect(executor.coordinator.installWait(for: "p1") == .fail(.cancelled(productID: "p1")))
        let second = executor.enqueue("p1")
        executor.install(second, content("p1"))
        #expect(executor.coordinator.installWait(for: "p1") == .installed(content("p1")))
    }

    @Test func theStateOfAProductIsItsLatestDownloadUnlessFinishedThenItsContent() {
        var executor = executor()
        #expect(executor.coordinator.state(of: "p1") == .notQueued)
        let id = executor.enqueue("p1")
        guard case .downloading(let running) = executor.coordinator.state(of: "p1") else {
            Issue.record("no download state")
            return
        }
        #expect(running.state == .active)
        executor.install(id, content("p1"))
        #expect(executor.coordinator.state(of: "p1") == .installed(content("p1")))
        _ = executor.event { $0.removeContent(of: "p1")?.1 ?? [] }
        #expect(executor.coordinator.state(of: "p1") == .notQueued)
    }
}

extension DownloadCoordinatorTests {
    /// #10: an update's reused bytes are counted from the checkpoints, kept through a relaunch, dropped with their
    /// file, and left out of the speed (which is the network's).
    @Test func reusedBytesAreReportedAndSurviveARelaunchButNotTheSpeed() throws {
        var executor = executor()
        let id = executor.enqueue("p1")
        let file = GrantFile(
            path: "a.bin", length: 600_000, sha256: String(repeating: "1", count: 64), url: "/v1/content/p1/2.0/a.bin",
            chunks: [
                GrantChunk(offset: 0, length: 300_000, sha256: String(repeating: "2", count: 64)),
                GrantChunk(offset: 300_000, length: 300_000, sha256: String(repeating: "3", count: 64)),
            ])
        let copied = GrantFile(
            path: "b.bin", length: 400_000, sha256: String(repeating: "4", count: 64), url: "/v1/content/p1/2.0/b.bin")
        let grant = Grant(
            productID: "p1", contentVersion: "2.0", totalLength: 1_000_000,
            expiresAt: Date().addingTimeInterval(600), token: "t", files: [file, copied], chunking: .standard)
        let epoch = ContinuousClock.now
        _ = executor.coordinator.checkpoint(id, [.grant(grant, receivedAt: Date())])
        _ = executor.coordinator.progress(id, written: 0, expected: 1_000_000, at: epoch, since: epoch, now: epoch)
        _ = executor.coordinator.checkpoint(
            id,
            [.verified(path: "b.bin", reused: 400_000), .chunkVerified(path: "a.bin", index: 1, reused: 300_000)])
        #expect(executor.coordinator.downloads[id]?.snapshot.progress.bytesReused == 700_000)

        // A second later 800,000 bytes are written, 700,000 of them copied: the speed is the 100,000 fetched.
        _ = executor.coordinator.progress(
            id, written: 800_000, expected: 1_000_000, at: epoch + .seconds(1), since: epoch,
            now: epoch + .seconds(1))
        let progress = try #require(executor.coordinator.downloads[id]?.progress)
        #expect(progress.bytesFetched == 100_000 && progress.bytesPerSecond == 100_000)

        // A relaunch reads the count from the journal; a discarded file takes its reused bytes with it.
        var relaunched = self.executor(snapshot: executor.coordinator.journalSnapshot)
        #expect(relaunched.coordinator.downloads[id]?.progress.bytesReused == 700_000)
        _ = relaunched.coordinator.checkpoint(id, [.discarded(path: "a.bin")])
        #expect(relaunched.coordinator.downloads[id]?.progress.bytesReused == 400_000)
    }
}
