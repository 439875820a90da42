import Foundation

/// Why a download is paused.
public enum PauseReason: String, Sendable, Hashable, Codable {
    /// The app or the user paused it (``KioskClient/pause(_:)-(String)``, Ctrl-C in `kiosk get`).
    case user
    /// There is not enough free space for the bytes still to fetch; free some and resume.
    case insufficientStorage = "insufficient_storage"
}

/// Where a download is in its lifecycle (a superset of `SKDownload.State`).
public enum DownloadState: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Queued; it starts when a slot is free (see ``KioskClient/Configuration/maximumConcurrentDownloads``).
    case waiting
    /// Fetching bytes.
    case active
    /// Stopped with its bytes kept until resumed.
    case paused(PauseReason)
    /// A transient failure happened; it starts again from the bytes on disk at `until`.
    case waitingToRetry(until: Date, attempt: Int)
    /// The server could not be reached (``KioskError/isUnreachable``): the client asks it, with a growing interval,
    /// whether it is reachable again, and the download goes on by itself from the bytes on disk as soon as it is,
    /// for as long as the client is open. Waiting uses up no retries. ``KioskClient/resume(_:)-(String)`` tries at once
    /// (for an app that learns from the system that the network is back).
    case waitingForNetwork
    /// Every byte is here; the files are being checked and moved into place.
    case verifying
    /// Installed: the content is in place and verified.
    case finished
    /// Stopped for good with an error (resume to try again).
    case failed(KioskError)
    /// Cancelled; its bytes are deleted.
    case cancelled

    /// Whether the download will not move on by itself (finished, failed or cancelled).
    public var isTerminal: Bool {
        switch self {
        case .finished, .failed, .cancelled: true
        default: false
        }
    }

    /// A short lowercase name: `waiting`, `active`, `paused`, `waiting_to_retry`, `waiting_for_network`,
    /// `verifying`, `finished`, `failed`, `cancelled`.
    public var name: String {
        switch self {
        case .waiting: "waiting"
        case .active: "active"
        case .paused: "paused"
        case .waitingToRetry: "waiting_to_retry"
        case .waitingForNetwork: "waiting_for_network"
        case .verifying: "verifying"
        case .finished: "finished"
        case .failed: "failed"
        case .cancelled: "cancelled"
        }
    }

    /// A readable form, e.g. `paused (insufficient_storage)`.
    public var description: String {
        switch self {
        case .paused(let reason): "paused (\(reason.rawValue))"
        case .waitingToRetry(let until, let attempt): "waiting to retry (attempt \(attempt), at \(until))"
        case .failed(let error): "failed: \(error.description)"
        default: name
        }
    }
}
