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
