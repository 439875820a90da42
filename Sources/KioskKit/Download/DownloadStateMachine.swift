import Foundation

/// The lifecycle of one download as an explicit state machine.
///
/// Each mutating method is an event; it changes ``state`` and returns the ``Action`` the owner must carry out.
/// There is no I/O in here: the ``KioskClient`` does what the actions say. An event that is not allowed in the
/// current state leaves the state unchanged and returns ``Action/rejected(_:)``.
///
/// ```
/// waiting ──start──▶ active ──transferCompleted──▶ verifying ──installed──▶ finished
///    ▲                 │  ╲──transientFailure──▶ waitingToRetry ──retryDue──▶ waiting
///    │                 │  ╲──unreachable──▶ waitingForNetwork ──networkReachable / resume──▶ waiting
///    │                 │   ╲─permanentFailure──▶ failed          (networkUnreachable: stays, probes again later)
///    └────resume─── paused ◀──pause / outOfSpace──┘
/// any non-terminal ──cancel──▶ cancelled
/// active ──grantNeeded──▶ active (renewGrant; past the limit, as transferFailed)
/// ```
struct DownloadStateMachine: Sendable, Hashable {
    /// What the owner must do after an event.
    enum Action: Sendable, Hashable {
        /// Nothing to do (the event changed nothing that needs work).
        case none
        /// Offer the download to the queue: it starts when a slot is free.
        case enqueue
        /// Start (or restart) the transfer from the bytes on disk.
        case startTransfer
        /// Stop the running transfer, keep the bytes.
        case stopTransfer
        /// Stop the running transfer, if any, and delete the download's bytes.
        case stopTransferAndDeleteBytes
        /// Arm a timer that sends ``retryDue()`` at the date.
        case scheduleRetry(at: Date)
        /// At the date, ask the server whether it is reachable, and send ``networkReachable()`` or
        /// ``networkUnreachable(now:policy:random:)``.
        case probeNetwork(at: Date)
        /// Ask the server for a new grant, then restart the transfer with it (the download stays active).
        case renewGrant
        /// Check and move the finished files into place.
        case verifyAndInstall
        /// Tell the app the content is installed.
        case reportInstalled
        /// Tell the app the download failed.
        case reportFailure(KioskError)
        /// The event is not allowed in this state; nothing changed.
        case rejected(String)
    }

    /// The current state.
    private(set) var state: DownloadState
    /// Transient failures since the last successful progress (drives the backoff).
    private(set) var attempt: Int
    /// Probes in a row that found the server unreachable (drives their backoff; not journaled: after a launch the
    /// probes start again at the shortest interval).
    private(set) var unreachableProbes = 0
    /// How many transient failures in a row are retried before the download fails.
    let maximumAttempts: Int
    /// Grant renewals since the transfer started or last verified bytes, a file or a chunk of one (not journaled: a
    /// transfer starts at 0).
    private(set) var renewalsWithoutProgress = 0
    /// How many grant renewals in a row, with nothing verified between them, a transfer asks for: the next need of
    /// a grant is a transfer failure (``transferFailed(_:now:policy:random:)``).
    static let maximumRenewalsWithoutProgress = 4

    /// Creates a machine, by default in ``DownloadState/waiting``.
    init(state: DownloadState = .waiting, attempt: Int = 0, maximumAttempts: Int = 8) {
        self.state = state
        self.attempt = attempt
        self.maximumAttempts = maximumAttempts
    }

    /// The queue gives the download a slot: `waiting` → `active`.
    mutating func start() -> Action {
        guard case .waiting = state else { return reject("start") }
        state = .active
        renewalsWithoutProgress = 0
        return .startTransfer
    }

    /// The app pauses, or the disk is full: `waiting`/`active`/`waitingToRetry`/`waitingForNetwork` →
    /// `paused(reason)`. Pausing an already paused download changes its reason only.
    mutating func pause(_ reason: PauseReason) -> Action {
        switch state {
        case .active:
            state = .paused(reason)
            return .stopTransfer
        case .waiting, .waitingToRetry, .waitingForNetwork, .paused:
            state = .paused(reason)
            return .none
        default:
            return reject("pause")
        }
    }

    /// The app resumes: `paused`/`failed` → `waiting`, and the attempt count starts over; `waitingForNetwork` →
    /// `waiting` (the app says the network is back: try at once).
    mutating func resume() -> Action {
        switch state {
        case .paused, .failed:
            state = .waiting
            attempt = 0
            unreachableProbes = 0
            return .enqueue
        case .waitingForNetwork:
            state = .waiting
            unreachableProbes = 0
            return .enqueue
        case .waiting, .active, .waitingToRetry, .verifying:
            return .none
        default:
            return reject("resume")
        }
    }

    /// The transfer made progress: the attempt count starts over. Valid only while active.
    mutating func madeProgress() {
        if case .active = state { attempt = 0 }
    }

    /// The transfer verified bytes (a file, or a chunk of one): the grant renewals start over. Valid only while
    /// active.
    mutating func verified() {
        if case .active = state { renewalsWithoutProgress = 0 }
    }

    /// The transfer stopped because it needs a new grant while active (`reason`: the token expired, the version is
    /// gone, or bytes did not match the grant). Up to ``maximumRenewalsWithoutProgress`` renewals in a row with
    /// nothing verified → ``Action/renewGrant`` (still `active`); one more is the transfer failure `reason`
    /// (``transferFailed(_:now:policy:random:)``: a retry after a backoff, or `failed`).
    mutating func grantNeeded(
        _ reason: KioskError, now: Date, policy: RetryPolicy,
        random: Double = Double.random(in: 0...1)
    ) -> Action {
        guard case .active = state else { return reject("grantNeeded") }
        guard renewalsWithoutProgress < Self.maximumRenewalsWithoutProgress else {
            return transferFailed(reason, now: now, policy: policy, random: random)
        }
        renewalsWithoutProgress += 1
        return .renewGrant
    }

    /// The transfer stopped with an error while active.
    ///
    /// - Insufficient storage → `paused(.insufficientStorage)` (bytes kept).
    /// - The server unreachable (``KioskError/isUnreachable``), attempts left → `waitingForNetwork`, with a probe
    ///   of the server after the backoff's first delay.
    /// - Another transient error, attempts left → `waitingToRetry(until: now + delay)`.
    /// - Anything else, or too many attempts → `failed(error)`.
    ///
    /// An attempt is a transfer that ended without progress: the transfers of a download waiting for the network
    /// start only once the server answers a probe, so however long the network is gone, the attempts are used up
    /// only by a server that answers probes and still fails every transfer.
    mutating func transferFailed(
        _ error: KioskError, now: Date, policy: RetryPolicy,
        random: Double = Double.random(in: 0...1)
    ) -> Action {
        guard case .active = state else { return reject("transferFailed") }
        if case .insufficientStorage = error {
            state = .paused(.insufficientStorage)
            return .none
        }
        if error.isTransient && attempt + 1 < maximumAttempts {
            attempt += 1
            if error.isUnreachable {
                state = .waitingForNetwork
                unreachableProbes = 0
                return .probeNetwork(at: now.addingTimeInterval(policy.delay(attempt: 1, random: random)))
            }
            var retryAfter: Double? = nil
            if case .server(_, _, _, let seconds) = error { retryAfter = seconds }
            let until = now.addingTimeInterval(policy.delay(attempt: attempt, retryAfter: retryAfter, random: random))
            state = .waitingToRetry(until: until, attempt: attempt)
            return .scheduleRetry(at: until)
        }
        state = .failed(error)
        return .reportFailure(error)
    }

    /// A probe found the server reachable: `waitingForNetwork` → `waiting`.
    mutating func networkReachable() -> Action {
        guard case .waitingForNetwork = state else { return reject("networkReachable") }
        state = .waiting
        unreachableProbes = 0
        return .enqueue
    }

    /// A probe found the server still unreachable: the download stays `waitingForNetwork` (no change of state) and
    /// the next probe comes after the backoff's next delay (doubling up to the policy's `maximumDelay`). Waiting
    /// uses up no attempts: it lasts for as long as the network is gone.
    mutating func networkUnreachable(
        now: Date, policy: RetryPolicy, random: Double = Double.random(in: 0...1)
    ) -> Action {
        guard case .waitingForNetwork = state else { return reject("networkUnreachable") }
        unreachableProbes += 1
        return .probeNetwork(
            at: now.addingTimeInterval(policy.delay(attempt: unreachableProbes + 1, random: random)))
    }

    /// The retry timer fired: `waitingToRetry` → `waiting`.
    mutating func retryDue() -> Action {
        guard case .waitingToRetry = state else { return reject("retryDue") }
        state = .waiting
        return .enqueue
    }

    /// Every file is downloaded: `active` → `verifying`.
    mutating func transferCompleted() -> Action {
        guard case .active = state else { return reject("transferCompleted") }
        state = .verifying
        return .verifyAndInstall
    }

    /// The content is verified and in place: `verifying` → `finished`. Also accepted from `active` and `paused`
    /// (a pause that arrived while the files were being moved): verified content in place is never thrown away.
    mutating func installed() -> Action {
        switch state {
        case .verifying, .active, .paused: break
        default: return reject("installed")
        }
        state = .finished
        attempt = 0
        return .reportInstalled
    }

    /// Verification or installation failed: `verifying` → `failed`.
    mutating func verificationFailed(_ error: KioskError) -> Action {
        guard case .verifying = state else { return reject("verificationFailed") }
        state = .failed(error)
        return .reportFailure(error)
    }

    /// The app cancels: any state but `finished`/`cancelled` → `cancelled`; the bytes are deleted.
    mutating func cancel() -> Action {
        switch state {
        case .finished, .cancelled: return reject("cancel")
        default:
            state = .cancelled
            return .stopTransferAndDeleteBytes
        }
    }

    /// After a relaunch, a download that was `active`, `verifying`, `waitingToRetry` or `waitingForNetwork` goes
    /// back to `waiting` so that it resumes from the bytes on disk.
    mutating func recoverAfterLaunch() -> Action {
        switch state {
        case .active, .verifying, .waitingToRetry, .waitingForNetwork:
            state = .waiting
            return .enqueue
        case .waiting:
            return .enqueue
        default:
            return .none
        }
    }

    private func reject(_ event: String) -> Action {
        .rejected("\(event) is not allowed while \(state.name)")
    }
}
