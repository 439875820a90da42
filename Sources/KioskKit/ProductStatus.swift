import Foundation

/// What an app shows for one product, the element of ``KioskClient/statusUpdates(for:)``: bind a view to it as to
/// AssetPackManager's status.
public enum ProductStatus: Sendable, Hashable {
    /// Neither queued nor installed: offer to download it.
    case notQueued
    /// A download of the product, in any state but `finished`: waiting, active, paused (its
    /// ``DownloadSnapshot/error`` says why a storage pause happened), retrying, verifying, failed or cancelled.
    case downloading(DownloadSnapshot)
    /// The content is installed and verified.
    case installed(InstalledContent)

    /// Whether nothing follows on a status stream: the content is installed, or the download failed or was
    /// cancelled.
    public var isFinal: Bool {
        switch self {
        case .notQueued: false
        case .installed: true
        case .downloading(let snapshot):
            switch snapshot.state {
            case .failed, .cancelled, .finished: true
            default: false
            }
        }
    }

    /// What an event means for the status of its product (``KioskEvent/productID``): the new status, and whether
    /// it is progress only (a run of progress may be coalesced to its latest); `nil` when it says nothing new (a
    /// `finished` state change: the ``KioskEvent/installed(_:)`` event follows).
    static func after(_ event: KioskEvent) -> (status: ProductStatus, isProgress: Bool)? {
        switch event {
        case .stateChanged(let snapshot): snapshot.state == .finished ? nil : (.downloading(snapshot), false)
        case .progress(let snapshot): (.downloading(snapshot), true)
        case .installed(let content): (.installed(content), false)
        case .removed: (.notQueued, false)
        }
    }
}

/// The buffer of one status stream. It keeps every change of state, in order, and of a run of progress updates
/// only the latest, so its size is bounded by the state changes not yet read (at most one progress element between
/// two of them), however slow the reader.
final class StatusBuffer: Sendable {
    private struct State {
        var pending: [ProductStatus] = []
        /// Whether the last pending element is progress (the next progress replaces it).
        var lastIsProgress = false
        /// No element is added any more (a final status was added, or the stream ended).
        var isFinished = false
        var reader: CheckedContinuation<ProductStatus?, Never>?
    }

    private let state = Locked(State())

    /// How many elements wait to be read (for tests of the bound).
    var pendingCount: Int { state.withLock { $0.pending.count } }

    /// Whether no element is added any more.
    var isFinished: Bool { state.withLock { $0.isFinished } }

    /// Adds a status; after a final one (``ProductStatus/isFinal``) the buffer ends once read.
    func push(_ status: ProductStatus, isProgress: Bool) {
        let reader: CheckedContinuation<ProductStatus?, Never>? = state.withLock { state in
            guard !state.isFinished else { return nil }
            if status.isFinal { state.isFinished = true }
            if let reader = state.reader {
                state.reader = nil
                return reader
            }
            if isProgress, state.lastIsProgress, !state.pending.isEmpty {
                state.pending[state.pending.count - 1] = status
            } else {
                state.pending.append(status)
            }
            state.lastIsProgress = isProgress
            return nil
        }
        reader?.resume(returning: status)
    }

    /// Ends the stream once the pending elements are read.
    func finish() {
        let reader: CheckedContinuation<ProductStatus?, Never>? = state.withLock { state in
            state.isFinished = true
            defer { state.reader = nil }
            return state.reader
        }
        reader?.resume(returning: nil)
    }

    /// The next element; `nil` at the end, or when the reading task is cancelled.
    func next() async -> ProductStatus? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ProductStatus?, Never>) in
                let ready: ProductStatus?? = state.withLock { state in
                    if !state.pending.isEmpty {
                        if state.pending.count == 1 { state.lastIsProgress = false }
                        return .some(state.pending.removeFirst())
                    }
                    if state.isFinished || Task.isCancelled { return .some(nil) }
                    state.reader = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            finish()
        }
    }
}
