import Foundation

/// Measures a transfer's speed with an exponentially weighted moving average and derives the time remaining.
///
/// Feed it the cumulative byte count with ``record(bytes:at:)``; samples closer than `minimumInterval` apart are
/// folded into the next one. The weight of a sample grows with the time it covers: `α = 1 − e^(−Δt/τ)`.
struct SpeedEstimator: Sendable, Hashable {
    /// The time constant τ of the average, in seconds.
    var timeConstant: Double
    /// The shortest interval measured on its own, in seconds.
    var minimumInterval: Double
    /// The smoothed speed in bytes per second; `nil` until two samples far enough apart were seen.
    private(set) var bytesPerSecond: Double?
    private var lastBytes: Int64?
    private var lastTime: Double?

    /// Creates an estimator (τ = 3 s by default).
    init(timeConstant: Double = 3, minimumInterval: Double = 0.05) {
        self.timeConstant = timeConstant
        self.minimumInterval = minimumInterval
    }

    /// Records that `bytes` bytes (cumulative) were written at `time` (seconds, any monotonic origin).
    mutating func record(bytes: Int64, at time: Double) {
        guard let lastBytes, let lastTime else {
            self.lastBytes = bytes
            self.lastTime = time
            return
        }
        if bytesPerSecond == nil, bytes == lastBytes {
            // Nothing has flowed yet (connecting, re-hashing a part file): the measurement starts later.
            self.lastTime = time
            return
        }
        if bytes < lastBytes {  // the count went back (a file restarted): measure from here
            self.lastBytes = bytes
            self.lastTime = time
            return
        }
        let interval = time - lastTime
        guard interval >= minimumInterval else { return }
        let instant = Double(bytes - lastBytes) / interval
        if let current = bytesPerSecond {
            let alpha = 1 - exp(-interval / timeConstant)
            bytesPerSecond = current + alpha * (instant - current)
        } else {
            bytesPerSecond = instant
        }
        self.lastBytes = bytes
        self.lastTime = time
    }

    /// Forgets the samples (after a pause: the next sample starts a new measurement).
    mutating func reset() {
        lastBytes = nil
        lastTime = nil
        bytesPerSecond = nil
    }

    /// The time to fetch `remaining` bytes at the smoothed speed; `nil` while the speed is unknown or zero.
    func timeRemaining(forRemaining remaining: Int64) -> Duration? {
        guard let speed = bytesPerSecond, speed > 0 else { return nil }
        if remaining <= 0 { return .zero }
        let seconds = Double(remaining) / speed
        guard seconds.isFinite, seconds < 1e9 else { return nil }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
