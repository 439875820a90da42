import Crypto
import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Downloads one file from a plain URL (not a product: no purchase, no grant) into a local file, resumably and
/// verified: what `kiosk get URL` does.
///
/// The bytes go to `<destination>.kiosk-part`, with what is known of the file next to them
/// (`<destination>.kiosk-part.json`: its `ETag`, `Last-Modified`, length and `Repr-Digest`). A run that stops
/// (cancelled, the network gone for longer than the retries last, a `403` from a signed URL that expired) keeps
/// them; the next run for the same destination and the same URL (its query may differ: a renewed signed URL)
/// resumes with `Range` and `If-Range`. Only bytes checked against ``Configuration/expectedSHA256``, or else the
/// server's `Repr-Digest`, or (with neither) against the file's length, are moved to `destination`; a wrong file
/// is never left there.
///
/// What is refused as an answer: a redirect to another origin (an error: ``KioskError/redirectRefused(from:to:)``),
/// an HTML page without a `Repr-Digest` for a path that is not HTML (an error page sent with status 200), a body
/// with a content coding (`gzip` on a range), a 206 that is not the range asked for or of another version of the
/// file (started over, never stitched). `URLDownloadMachine` holds every rule.
///
/// ```swift
/// let download = try URLDownload(url: url, to: caches.appending(path: "level-7.pak"))
/// let outcome = try await download.run { progress in print(progress.bytesOnDisk) }
/// print(outcome.sha256, outcome.verification)
/// ```
public struct URLDownload: Sendable {
    /// What the saved bytes were checked against.
    public enum Verification: String, Sendable, Hashable {
        /// ``Configuration/expectedSHA256``.
        case expectedSHA256 = "sha256"
        /// The server's `Repr-Digest` (RFC 9530).
        case representationDigest = "repr-digest"
        /// Nothing but the length the server gave: it sent no digest and none was expected.
        case none
    }

    /// How a download retries and what it checks.
    public struct Configuration: Sendable {
        /// How failures that may pass are retried (network, 408, 429, 5xx, answers refused); bytes written start
        /// the attempts over.
        public var retryPolicy = RetryPolicy()
        /// The idle timeout of a request, in seconds: connecting, the head, any wait for more of the body.
        public var timeout: TimeInterval = 60
        /// The SHA-256 the file must have (hex), checked instead of the server's `Repr-Digest`.
        public var expectedSHA256: String?
        /// Allows a plain `http://` URL whose host is not loopback.
        public var allowsInsecureHTTP = false

        /// The defaults: ``RetryPolicy``'s, a 60 s idle timeout, no expected SHA-256, `https://` or loopback only.
        public init() {}
    }

    /// Where a download stands.
    public struct Progress: Sendable, Hashable {
        /// The bytes of the file in the partial file.
        public var bytesOnDisk: Int64
        /// The file's length, once an answer gave it.
        public var totalLength: Int64?
    }

    /// What a finished download saved.
    public struct Outcome: Sendable, Hashable {
        /// The destination, which now holds the file.
        public var file: URL
        /// The file's length in bytes.
        public var length: Int64
        /// Its lowercase hex SHA-256.
        public var sha256: String
        /// What the bytes were checked against before they were moved into place.
        public var verification: Verification
        /// The bytes on disk when this run started (resumed from an earlier run).
        public var resumedFrom: Int64
        /// The file's bytes this run received.
        public var bytesFetched: Int64
        /// How many times the file was started over after bytes had come (a changed file, a wrong digest, a
        /// server that sent the whole file for a range).
        public var restarts: Int
    }

    /// The `User-Agent` of the requests.
    static let userAgent = "KioskKit-URLDownload/1"

    /// The file's URL.
    public let url: URL
    /// Where the file goes once verified (its folder holds the partial file meanwhile).
    public let destination: URL
    /// How the download retries and what it checks.
    public let configuration: Configuration
    private let makeTransport: @Sendable () -> any StreamingTransport

    /// A download of `url` into the file `destination` (whose folder must exist).
    ///
    /// - Throws: ``KioskError/invalidArgument(_:)`` for a URL that is not `http(s)://host/…` or an expected SHA-256
    ///   that is not 64 hex digits; ``KioskError/insecureServerURL(host:)`` for plain `http://` to a host that is
    ///   not loopback without ``Configuration/allowsInsecureHTTP``.
    public init(url: URL, to destination: URL, configuration: Configuration = Configuration()) throws(KioskError) {
        try self.init(url: url, to: destination, configuration: configuration, sessionConfiguration: nil)
    }

    /// As ``init(url:to:configuration:)``; with a `sessionConfiguration`, requests go through a URLSession made
    /// from it on every platform (on Linux without one, through SwiftNIO, as content does).
    init(
        url: URL, to destination: URL, configuration: Configuration, sessionConfiguration: URLSessionConfiguration?
    ) throws(KioskError) {
        guard let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil,
            !url.path.isEmpty
        else {
            throw KioskError.invalidArgument("'\(url.absoluteString)' is not an http:// or https:// URL of a file.")
        }
        try ServerURLPolicy.check(url, allowsInsecureHTTP: configuration.allowsInsecureHTTP)
        var configuration = configuration
        if let expected = configuration.expectedSHA256 {
            let hex = expected.lowercased()
            guard hex.utf8.count == 64, hex.utf8.allSatisfy({ $0.isHexDigit }) else {
                throw KioskError.invalidArgument("The expected SHA-256 must be 64 hex digits, not '\(expected)'.")
            }
            configuration.expectedSHA256 = hex
        }
        self.url = url
        self.destination = destination
        self.configuration = configuration
        let timeout = configuration.timeout
        #if canImport(AsyncHTTPClient) && os(Linux)
            if sessionConfiguration == nil {
                makeTransport = { NIOStreamingTransport(timeout: timeout) }
                return
            }
        #endif
        // URLSessionConfiguration is a class that is not Sendable: each transport gets a copy made here.
        let copy = sessionConfiguration?.copy() as? URLSessionConfiguration
        let box = SessionConfigurationBox(copy)
        makeTransport = { URLSessionStreamingTransport(timeout: timeout, configuration: box.copy()) }
    }

    /// The partial file: `<destination>.kiosk-part`.
    public var partialFile: URL { destination.deletingLastPathComponent().appendingPathComponent(partialName) }

    /// What is known of the partial file's bytes: `<destination>.kiosk-part.json`.
    public var resumeRecordFile: URL {
        destination.deletingLastPathComponent().appendingPathComponent(partialName + ".json")
    }

    private var partialName: String { destination.lastPathComponent + ".kiosk-part" }

    /// Downloads the file, resuming the bytes an earlier run left, and moves it to ``destination`` once verified.
    /// `progress` is called as bytes are written.
    ///
    /// - Throws: ``KioskError``:
    ///   - ``KioskError/cancelled(productID:)`` (naming the URL) when the task is cancelled, the bytes kept;
    ///   - the last failure when the retries are used up, the bytes kept;
    ///   - ``KioskError/server(status:code:message:retryAfter:)`` for a status that retrying does not fix (a `403`
    ///     from a signed URL that expired: run again with a renewed one to resume);
    ///   - ``KioskError/redirectRefused(from:to:)``, ``KioskError/tooManyRedirects(url:limit:)``;
    ///   - ``KioskError/contentMismatch(url:expectedSHA256:actualSHA256:)``, no bytes kept;
    ///   - file system errors.
    public func run(progress: @escaping @Sendable (Progress) -> Void = { _ in }) async throws(KioskError) -> Outcome {
        let transport = makeTransport()
        let result: Result<Outcome, KioskError>
        do {
            result = .success(try await execute(transport, progress: progress))
        } catch {
            result = .failure(error)
        }
        await transport.shutdown()
        return try result.get()
    }

    private func execute(
        _ transport: any StreamingTransport, progress: @Sendable (Progress) -> Void
    ) async throws(KioskError) -> Outcome {
        var partial = try PartialFile(file: partialFile, record: resumeRecordFile, url: url)
        let resumedFrom = partial.bytesOnDisk
        var machine = URLDownloadMachine(
            url: url, expectedSHA256: configuration.expectedSHA256,
            maximumAttempts: configuration.retryPolicy.maximumAttempts, representation: partial.representation,
            bytesOnDisk: partial.bytesOnDisk)
        var fetched: Int64 = 0
        var body: (any AnswerBody)?
        var action = machine.start()
        while true {
            if Task.isCancelled { throw KioskError.cancelled(productID: url.absoluteString) }
            switch action {
            case .send(let target, let headers):
                do {
                    let (head, answerBody) = try await transport.get(target, headers: headers)
                    action = machine.received(head)
                    body = answerBody
                } catch {
                    if case .cancelled = error { throw error }
                    action = machine.requestFailed(error)
                }
                if case .takeBody = action {
                } else {
                    body?.cancel()
                    body = nil
                }
            case .takeBody(let offset, let representation):
                guard let answer = body else { preconditionFailure("takeBody without an answer") }
                body = nil
                let ended = try await partial.take(
                    answer, from: offset, representation: representation
                ) { piece, onDisk in
                    fetched += piece
                    progress(Progress(bytesOnDisk: onDisk, totalLength: representation.length))
                }
                action = machine.bodyEnded(bytesOnDisk: partial.bytesOnDisk, error: ended)
            case .restart:
                try partial.discard()
                action = machine.restarted()
            case .wait(let attempt, let retryAfter):
                let seconds = configuration.retryPolicy.delay(
                    attempt: attempt, retryAfter: retryAfter, random: Double.random(in: 0...1))
                do {
                    try await Task.sleep(for: .seconds(seconds))
                } catch {
                    throw KioskError.cancelled(productID: url.absoluteString)
                }
                action = machine.waited()
            case .verify:
                action = machine.verified(sha256: partial.sha256)
            case .finish(let verification):
                let length = partial.bytesOnDisk
                let sha256 = partial.sha256
                try partial.move(to: destination)
                return Outcome(
                    file: destination, length: length, sha256: sha256, verification: verification,
                    resumedFrom: resumedFrom, bytesFetched: fetched, restarts: machine.restarts)
            case .fail(let error, let keepsPartial):
                if !keepsPartial { try partial.discard() }
                throw error
            }
        }
    }
}

/// A copy of the app's session configuration for each transport. `@unchecked Sendable`: the configuration is
/// never changed after `init`, only copied.
private final class SessionConfigurationBox: @unchecked Sendable {
    private let configuration: URLSessionConfiguration?
    init(_ configuration: URLSessionConfiguration?) { self.configuration = configuration }
    func copy() -> URLSessionConfiguration? { configuration?.copy() as? URLSessionConfiguration }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
    }
}
