import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension KioskClient {
    /// Tunables of a client.
    public struct Configuration: Sendable {
        /// How many downloads run at once (default 2).
        public var maximumConcurrentDownloads: Int = 2
        /// The most content connections to the server at once, shared by every download (default 8). A download of
        /// many small files fetches up to this many files at once over kept-alive connections; the downloads in
        /// flight (``maximumConcurrentDownloads``) share the same connections. The content session's
        /// `httpMaximumConnectionsPerHost` is set to it. Must be at least 1.
        public var maximumConnections: Int = 8
        /// The most range requests of one file in flight at once, for a file the server cut into chunks (default 4).
        /// Each chunk is verified on its own as it arrives; the requests draw from ``maximumConnections`` like the
        /// files in flight. Values below 1 count as 1.
        public var maxConnectionsPerFile: Int = 4
        /// Whether runs of small files (up to 256 KiB each, up to 512 files or 2 MiB a run) come from the grant's
        /// pack, one ranged request per run, when the server offers one (default `true`). Each file is still
        /// verified against its own SHA-256. `false` fetches every file with a request of its own, for example when a
        /// cache in front of the server keeps files by URL.
        public var usesPacks: Bool = true
        /// How transient failures are retried.
        public var retryPolicy = RetryPolicy()
        /// The idle timeout of requests, in seconds, when there is no ``sessionConfiguration`` (whose own timeouts
        /// then apply).
        public var requestTimeout: TimeInterval = 60
        /// The app's session settings, applied to both of KioskKit's sessions (catalog, receipts and grants; content),
        /// or `nil` for KioskKit's own: an ephemeral session without cookie storage. It is copied when the client is
        /// created.
        ///
        /// Kept from it: `httpAdditionalHeaders`, the timeouts (``requestTimeout`` then does not apply), cookie
        /// storage and policy (catalog, receipts and grants only), proxies, TLS settings. Replaced, because downloads
        /// need it: no URL cache (`urlCache`, `requestCachePolicy`), no cookies on content requests, the content session's `httpMaximumConnectionsPerHost` (set to
        /// ``maximumConnections``), KioskKit's own delegate and delegate queues, and `Accept-Encoding: identity` on
        /// content requests. On Linux, Foundation ignores `waitsForConnectivity` and the cellular settings
        /// (`allowsCellularAccess`, `allowsExpensiveNetworkAccess`, `allowsConstrainedNetworkAccess`).
        public var sessionConfiguration: URLSessionConfiguration?
        /// The largest answer a JSON request (catalog, receipts, grants) accepts, in bytes, counted as the decoded
        /// bytes arrive (default 16 MiB, over twice the grant of a 20,000-file product). A larger answer fails with
        /// ``KioskError/responseTooLarge(limit:)``.
        public var maximumResponseSize: Int = 16 << 20
        /// The longest a JSON request may take from start to last byte, in seconds (default 120), however steadily
        /// bytes arrive. ``requestTimeout`` is the idle timeout; content downloads have no total deadline.
        public var jsonRequestDeadline: TimeInterval = 120
        /// Whether a plain `http://` server URL may name a host that is not loopback (default `false`, as App
        /// Transport Security). `http://localhost`, `http://127.0.0.1` and `http://[::1]` are always allowed.
        public var allowsInsecureHTTP = false
        /// What a grant may list (file count, total length).
        public var grantLimits = GrantLimits()
        /// Opens partial files for writing; replace it to simulate a full disk.
        public var fileWriterFactory: FileWriterFactory = .posix
        /// Free bytes on the cache volume; replace it to simulate a small disk.
        public var availableSpace: @Sendable (URL) -> Int64? = { DiskSpace.available(at: $0) }
        /// The shortest interval between two progress events of one download.
        public var progressInterval: Duration = .milliseconds(100)
        /// Where the installation ID comes from (default ``InstallationIdentity/standard``: a UUID kept in
        /// Application Support, which survives a purge of Caches and a new cache root). Give the app's own ID,
        /// kept in the Keychain, to keep the installation across reinstalls.
        public var installationIdentity: InstallationIdentity = .standard
        /// Every file-system call of the client goes through it (tests inject one that counts calls).
        var fileSystem: any KioskFileSystem = POSIXFileSystem()
        /// The time retries and probes of an unreachable server go by (tests inject one they move by hand).
        var clock: any KioskClock = SystemClock()

        /// The defaults.
        public init() {}
    }
}
