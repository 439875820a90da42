import Crypto
import Foundation
import KioskCore

/// The bytes of a download on disk while several files are in flight: the verified bytes plus each file's bytes so
/// far, kept as a running total (O(1) per report), and reported at most every 50 ms (and when complete).
final class ProgressTally: Sendable {
    private struct State {
        var total: Int64
        var inFlight: [String: Int64] = [:]
        var lastReport: UInt64 = 0
    }

    private let state: Locked<State>
    private let expected: Int64
    private let report: @Sendable (_ written: Int64, _ expected: Int64) -> Void

    init(verified: Int64, expected: Int64, report: @escaping @Sendable (_ written: Int64, _ expected: Int64) -> Void) {
        state = Locked(State(total: verified))
        self.expected = expected
        self.report = report
    }

    /// The file at `path` has `bytes` on disk.
    func update(_ path: String, bytes: Int64) {
        change { state in
            state.total += bytes - (state.inFlight.updateValue(bytes, forKey: path) ?? 0)
        }
    }

    /// The file at `path` is no longer in flight: its bytes counted so far are replaced by the `adding` bytes it
    /// verified in this run (its length, or the chunks it verified before failing; 0 leaves its bytes out until it
    /// is fetched again).
    func settle(_ path: String, adding verified: Int64) {
        change { state in
            state.total += verified - (state.inFlight.removeValue(forKey: path) ?? 0)
        }
    }

    private func change(_ body: (inout State) -> Void) {
        let now = DispatchTime.now().uptimeNanoseconds
        let total: Int64? = state.withLock { state in
            body(&state)
            guard state.total >= expected || now &- state.lastReport >= 50_000_000 else { return nil }
            state.lastReport = now
            return state.total
        }
        if let total { report(total, expected) }
    }
}
