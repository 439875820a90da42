import Foundation

/// The time a ``KioskClient`` goes by for its retries and its probes of an unreachable server: the system's, or
/// one a test moves by hand.
protocol KioskClock: Sendable {
    /// The date now.
    var now: Date { get }
    /// Returns once `deadline` has come (at once when it has passed).
    /// - Throws: `CancellationError` when the calling task is cancelled first.
    func sleep(until deadline: Date) async throws
}

/// The system's time.
struct SystemClock: KioskClock {
    var now: Date { Date() }

    func sleep(until deadline: Date) async throws {
        let seconds = deadline.timeIntervalSinceNow
        if seconds > 0 { try await Task.sleep(for: .seconds(seconds)) }
        try Task.checkCancellation()
    }
}
