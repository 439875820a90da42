import Foundation

/// How far a download is: bytes, fraction, smoothed speed and time remaining.
///
/// For an update (a new version of an installed product), ``bytesWritten`` counts both the bytes copied from the
/// installed version (``bytesReused``) and those fetched (``bytesFetched``).
public struct DownloadProgress: Sendable, Hashable, Codable {
    /// Bytes of the current version on disk: verified files, the verified chunks of files fetched by chunks (a chunk
    /// in flight counts once it is verified), and the partial files of files fetched whole. Includes
    /// ``bytesReused``.
    public var bytesWritten: Int64
    /// The total size of the version, 0 until the grant is known.
    public var bytesExpected: Int64
    /// Smoothed speed in bytes per second (exponentially weighted moving average), 0 while unknown. Measured on the
    /// bytes fetched: bytes reused do not count.
    public var bytesPerSecond: Double
    /// The estimated time left, `nil` while unknown (no speed measured yet, or not transferring).
    public var timeRemaining: Duration?
    /// Of ``bytesWritten``, the bytes copied from the installed version of the product instead of fetched: whole
    /// files whose SHA-256 is unchanged (under any path) and the chunks of changed files found in the installed
    /// files. 0 for a first download. Kept across relaunches (the journal records it with each file and chunk).
    public var bytesReused: Int64

    /// Creates a progress value.
    public init(
        bytesWritten: Int64 = 0, bytesExpected: Int64 = 0, bytesPerSecond: Double = 0,
        timeRemaining: Duration? = nil, bytesReused: Int64 = 0
    ) {
        self.bytesWritten = bytesWritten
        self.bytesExpected = bytesExpected
        self.bytesPerSecond = bytesPerSecond
        self.timeRemaining = timeRemaining
        self.bytesReused = bytesReused
    }

    /// Of ``bytesWritten``, the bytes fetched from the server (those not reused).
    public var bytesFetched: Int64 { max(0, bytesWritten - bytesReused) }

    /// `bytesWritten / bytesExpected` in 0…1 (0 while the size is unknown): reused and fetched bytes both count.
    public var fraction: Double {
        guard bytesExpected > 0 else { return 0 }
        return min(1, max(0, Double(bytesWritten) / Double(bytesExpected)))
    }

    private enum CodingKeys: String, CodingKey {
        case bytesWritten, bytesExpected, bytesPerSecond, timeRemaining, bytesReused
    }

    /// Decodes a progress value; one encoded before ``bytesReused`` existed reads with 0.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        bytesWritten = try container.decode(Int64.self, forKey: .bytesWritten)
        bytesExpected = try container.decode(Int64.self, forKey: .bytesExpected)
        bytesPerSecond = try container.decode(Double.self, forKey: .bytesPerSecond)
        timeRemaining = try container.decodeIfPresent(Duration.self, forKey: .timeRemaining)
        bytesReused = try container.decodeIfPresent(Int64.self, forKey: .bytesReused) ?? 0
    }
}

/// Measures a transfer's speed with an exponentially weighted moving average and derives the time remaining.
///
/// Feed it the cumulative byte count with ``record(bytes:at:)``; samples closer than `minimumInterval` apart are
/// folded into the next one. The weight of a sample grows with the time it covers: `α = 1 − e^(−Δt/τ)`.
public struct SpeedEstimator: Sendable, Hashable {
    /// The time constant τ of the average, in seconds.
    public var timeConstant: Double
    /// The shortest interval measured on its own, in seconds.
    public var minimumInterval: Double
    /// The smoothed speed in bytes per second; `nil` until two samples far enough apart were seen.
    public private(set) var bytesPerSecond: Double?
    private var lastBytes: Int64?
    private var lastTime: Double?

    /// Creates an estimator (τ = 3 s by default).
    public init(timeConstant: Double = 3, minimumInterval: Double = 0.05) {
        self.timeConstant = timeConstant
        self.minimumInterval = minimumInterval
    }

    /// Records that `bytes` bytes (cumulative) were written at `time` (seconds, any monotonic origin).
    public mutating func record(bytes: Int64, at time: Double) {
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
    public mutating func reset() {
        lastBytes = nil
        lastTime = nil
        bytesPerSecond = nil
    }

    /// The time to fetch `remaining` bytes at the smoothed speed; `nil` while the speed is unknown or zero.
    public func timeRemaining(forRemaining remaining: Int64) -> Duration? {
        guard let speed = bytesPerSecond, speed > 0 else { return nil }
        if remaining <= 0 { return .zero }
        let seconds = Double(remaining) / speed
        guard seconds.isFinite, seconds < 1e9 else { return nil }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
