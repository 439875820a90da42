import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The lifecycle of one ``URLDownload``, without I/O: each event (an answer's head, the end of its body, a wait
/// over, the hash of the bytes on disk) returns the one ``Action`` the executor carries out next.
///
/// The rules, in one place:
/// - A request resumes from the bytes on disk (`Range: bytes=<n>-`, `If-Range` with a strong `ETag` or else
///   `Last-Modified`), asks for no content coding, and follows redirects on the URL's own origin only (at most
///   ``maximumRedirects``): a redirect to another origin ends the download with an error.
/// - A 206 must be the range asked for (`Content-Range` from the first missing byte to the last of the file, a
///   `Content-Length` that agrees) of the same file (no other strong tag, digest, length or date): a file that
///   changed is started over, never stitched. A 200 is the whole file: the download starts over with it.
/// - An HTML page without a `Repr-Digest` for a path that is not an HTML file, and a body with a content coding,
///   are refused as answers (retried), never written as the file.
/// - At the end the bytes are checked against the SHA-256 the caller expects, or else the server's `Repr-Digest`:
///   bytes that do not match are fetched again from the start.
/// - Failures that may pass (network, 408, 429, 5xx, a refused answer) are retried after ``RetryPolicy``'s delay,
///   up to its attempts in a row; bytes written start the count over, and a body cut after bringing bytes is
///   continued at once. Other statuses end the download, its bytes kept for a later run. Starting over (a changed
///   file, wrong bytes, a refused range) happens at once, at most as many times as there are attempts.
struct URLDownloadMachine {
    /// What the executor does next.
    enum Action: Equatable {
        /// Send `GET url` with `headers`, then call ``received(_:)`` with the head, or ``requestFailed(_:)``.
        case send(URL, headers: [String: String])
        /// Write the answer's body into the partial file from byte `offset` (0: the file is emptied first),
        /// after keeping `representation` next to it; then call ``bodyEnded(bytesOnDisk:error:)``.
        case takeBody(offset: Int64, representation: URLRepresentation)
        /// Empty the partial file and forget its representation, then call ``restarted()``.
        case restart
        /// Wait before retry number `attempt` (honouring the server's `retryAfter`), then call ``waited()``.
        case wait(attempt: Int, retryAfter: Double?)
        /// Hash the partial file, then call ``verified(sha256:)``.
        case verify
        /// The bytes are the file's: move them into place.
        case finish(URLDownload.Verification)
        /// Stop with `error`; `keepsPartial` says whether the bytes on disk stay for a later run.
        case fail(KioskError, keepsPartial: Bool)
    }

    /// The most redirects one request follows.
    static let maximumRedirects = 10

    let url: URL
    /// The SHA-256 the caller expects (lowercase hex), which wins over the server's `Repr-Digest`.
    let expectedSHA256: String?
    let maximumAttempts: Int
    /// The file the bytes on disk belong to; nil before the first answer (and after a restart).
    private(set) var representation: URLRepresentation?
    private(set) var bytesOnDisk: Int64
    /// How many times the download started over after bytes had come.
    private(set) var restarts = 0
    /// Failures in a row since bytes were last written.
    private var failures = 0
    /// Times the download threw its bytes away and started over.
    private var starts = 0
    private var redirects = 0
    /// The URL of the request in flight (after redirects) and the first byte it asks for.
    private var target: URL
    private var askedFrom: Int64 = 0

    /// A download of `url` that goes on from `bytesOnDisk` bytes of `representation` (0 and nil: from scratch).
    init(
        url: URL, expectedSHA256: String?, maximumAttempts: Int, representation: URLRepresentation?,
        bytesOnDisk: Int64
    ) {
        self.url = url
        self.expectedSHA256 = expectedSHA256
        self.maximumAttempts = max(1, maximumAttempts)
        self.representation = representation
        self.bytesOnDisk = representation == nil ? 0 : bytesOnDisk
        target = url
    }

    /// The first action: the hash check when every byte is on disk already, a request otherwise.
    mutating func start() -> Action {
        if let length = representation?.length, bytesOnDisk == length, length > 0 { return .verify }
        return request()
    }

    /// The head of the answer to the last ``Action/send(_:headers:)``.
    mutating func received(_ head: AnswerHead) -> Action {
        switch head.status {
        case 301, 302, 303, 307, 308: redirect(head)
        case 200, 206: content(head)
        case 416: rangeRefused(head)
        default: errorAnswer(head)
        }
    }

    /// The request got no head (`error`).
    mutating func requestFailed(_ error: KioskError) -> Action {
        error.isTransient ? failure(error, retryAfter: nil) : .fail(error, keepsPartial: true)
    }

    /// The body of the answer being taken ended, with `bytesOnDisk` bytes now in the partial file, on its own
    /// (`error` nil) or because the connection failed or the body went past the file's length.
    mutating func bodyEnded(bytesOnDisk count: Int64, error: KioskError?) -> Action {
        let progressed = count > bytesOnDisk
        bytesOnDisk = count
        if progressed { failures = 0 }
        if let error {
            if case .invalidResponse(let reason) = error { return restart(because: .invalidResponse(reason)) }
            guard error.isTransient else { return .fail(error, keepsPartial: true) }
            return progressed ? request() : failure(error, retryAfter: nil)
        }
        guard let length = representation?.length else {
            representation?.length = count
            return .verify
        }
        if count == length { return .verify }
        if count > length {
            return restart(because: .invalidResponse("the body went on past the file's \(length) bytes"))
        }
        let cut = KioskError.network(
            code: URLError.networkConnectionLost.rawValue,
            underlying: "the answer ended after \(count) of the file's \(length) bytes")
        return progressed ? request() : failure(cut, retryAfter: nil)
    }

    /// A ``Action/wait(attempt:retryAfter:)`` is over.
    mutating func waited() -> Action { request() }

    /// The partial file is empty (``Action/restart``).
    mutating func restarted() -> Action { request() }

    /// The SHA-256 of the partial file, every byte of the file on disk.
    mutating func verified(sha256: String) -> Action {
        if let expectedSHA256 {
            if sha256 == expectedSHA256 { return .finish(.expectedSHA256) }
            let mismatch = KioskError.contentMismatch(
                url: url.absoluteString, expectedSHA256: expectedSHA256, actualSHA256: sha256)
            // The server's own digest vouches for what came: the server has another file than the one expected.
            if representation?.sha256 == sha256 { return .fail(mismatch, keepsPartial: false) }
            return restart(because: mismatch)
        }
        guard let announced = representation?.sha256 else { return .finish(.none) }
        if sha256 == announced { return .finish(.representationDigest) }
        return restart(
            because: .contentMismatch(url: url.absoluteString, expectedSHA256: announced, actualSHA256: sha256))
    }

    // MARK: - Requests

    private mutating func request() -> Action {
        redirects = 0
        return send(to: url)
    }

    private mutating func send(to destination: URL) -> Action {
        target = destination
        askedFrom = bytesOnDisk
        var headers = ["Accept-Encoding": "identity", "User-Agent": URLDownload.userAgent]
        if bytesOnDisk > 0 {
            headers["Range"] = "bytes=\(bytesOnDisk)-"
            if let validator = representation?.ifRange { headers["If-Range"] = validator }
        }
        return .send(destination, headers: headers)
    }

    private mutating func redirect(_ head: AnswerHead) -> Action {
        guard let location = head["Location"], let next = URL(string: location, relativeTo: target)?.absoluteURL
        else {
            return failure(.invalidResponse("a \(head.status) redirect without a usable Location"), retryAfter: nil)
        }
        guard Self.origin(of: next) == Self.origin(of: url) else {
            return .fail(.redirectRefused(from: Self.origin(of: url), to: Self.origin(of: next)), keepsPartial: true)
        }
        redirects += 1
        guard redirects <= Self.maximumRedirects else {
            return .fail(.tooManyRedirects(url: url.absoluteString, limit: Self.maximumRedirects), keepsPartial: true)
        }
        return send(to: next)
    }

    private mutating func content(_ head: AnswerHead) -> Action {
        if let coding = head["Content-Encoding"], coding.lowercased() != "identity" {
            return failure(
                .invalidResponse("the answer came with Content-Encoding \(coding), which was not asked for"),
                retryAfter: nil)
        }
        if isErrorPage(head) {
            return failure(
                .invalidResponse(
                    "an HTML page (\(head["Content-Type"] ?? "")) came with status \(head.status) instead of the file"),
                retryAfter: nil)
        }
        let contentLength = head["Content-Length"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        guard head.status == 206 else {
            // The whole file: what the server has now, whatever was on disk.
            if askedFrom > 0 { restarts += 1 }
            bytesOnDisk = 0
            let whole = URLRepresentation(head, length: contentLength)
            representation = whole
            return .takeBody(offset: 0, representation: whole)
        }
        let field = head["Content-Range"]
        guard case .satisfied(let range, let complete?)? = field.flatMap(ContentRange.init(parsing:)),
            range.first == askedFrom, range.last == complete - 1
        else {
            return failure(
                .invalidResponse("a 206 with Content-Range '\(field ?? "")' for bytes=\(askedFrom)-"),
                retryAfter: nil)
        }
        if let contentLength, contentLength != range.length {
            return failure(
                .invalidResponse("a 206 whose Content-Length \(contentLength) is not its range's \(range.length)"),
                retryAfter: nil)
        }
        let answered = URLRepresentation(head, length: complete)
        guard var known = representation else {
            representation = answered
            return .takeBody(offset: askedFrom, representation: answered)
        }
        if let change = known.difference(from: answered) {
            return restart(because: .invalidResponse("the file changed on the server during the download: \(change)"))
        }
        known.length = complete
        known.entityTag = known.entityTag ?? answered.entityTag
        known.lastModified = known.lastModified ?? answered.lastModified
        known.sha256 = known.sha256 ?? answered.sha256
        representation = known
        return .takeBody(offset: askedFrom, representation: known)
    }

    private mutating func rangeRefused(_ head: AnswerHead) -> Action {
        if case .unsatisfied(let complete)? = head["Content-Range"].flatMap(ContentRange.init(parsing:)),
            complete == bytesOnDisk, representation?.length ?? complete == complete
        {
            representation?.length = complete
            return .verify
        }
        return restart(because: .invalidResponse("the server refused the range bytes=\(askedFrom)- (416)"))
    }

    private mutating func errorAnswer(_ head: AnswerHead) -> Action {
        let retryAfter = RetryAfter.seconds(from: head["Retry-After"])
        let error = KioskError.server(
            status: head.status, code: "http_\(head.status)",
            message: HTTPURLResponse.localizedString(forStatusCode: head.status), retryAfter: retryAfter)
        return error.isTransient ? failure(error, retryAfter: retryAfter) : .fail(error, keepsPartial: true)
    }

    // MARK: - Failures

    /// Counts a failure: a wait before the next attempt, or the end once the attempts are used up.
    private mutating func failure(_ error: KioskError, retryAfter: Double?) -> Action {
        failures += 1
        guard failures < maximumAttempts else { return .fail(error, keepsPartial: true) }
        return .wait(attempt: failures, retryAfter: retryAfter)
    }

    /// Throws the bytes on disk away and starts over, at once. Counted apart from the failures (which bytes
    /// written start over): a server that sends a wrong file every time ends the download with `error` after
    /// `maximumAttempts` starts.
    private mutating func restart(because error: KioskError) -> Action {
        starts += 1
        guard starts < maximumAttempts else { return .fail(error, keepsPartial: false) }
        if bytesOnDisk > 0 { restarts += 1 }
        bytesOnDisk = 0
        representation = nil
        return .restart
    }

    /// An HTML page the server sent for a file that is not HTML, without a digest to vouch for it: an error page.
    private func isErrorPage(_ head: AnswerHead) -> Bool {
        let type = (head["Content-Type"] ?? "").lowercased()
        guard type.hasPrefix("text/html") || type.hasPrefix("application/xhtml"), head["Repr-Digest"] == nil else {
            return false
        }
        return !["html", "htm", "xhtml", "shtml"].contains(url.pathExtension.lowercased())
    }

    /// `scheme://host:port`, the port always written.
    static func origin(of url: URL) -> String {
        let scheme = (url.scheme ?? "").lowercased()
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\((url.host ?? "").lowercased()):\(port)"
    }
}
