import Foundation
import KioskCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every error KioskKit reports, with a stable machine code and a sentence a person understands.
///
/// Errors are values (`Codable`, `Hashable`) so that a failed download keeps its error across launches in the
/// journal. None of them ever carries a receipt or a grant token.
public enum KioskError: Error, Sendable, Hashable, Codable, CustomStringConvertible, LocalizedError {
    /// The server answered with an error envelope (`{"error": {"code", "message"}}`).
    ///
    /// - Parameters:
    ///   - status: the HTTP status code.
    ///   - code: the server's machine code (see `APIErrorCode`), kept as a string for codes newer than this library.
    ///   - message: the server's sentence.
    ///   - retryAfter: seconds the server asked to wait (`Retry-After`), if any.
    case server(status: Int, code: String, message: String, retryAfter: Double?)
    /// A file did not match the grant's length or SHA-256 even after being downloaded again.
    case integrity(productID: String, path: String, expectedSHA256: String, actualSHA256: String)
    /// There is not enough free space to store the bytes still to fetch.
    case insufficientStorage(needed: Int64, available: Int64?)
    /// The network failed (no connection, timeout, connection lost). `underlying` is the system's description.
    case network(code: Int, underlying: String)
    /// The server's answer was not what the contract promises (wrong status, type, `Content-Range`, body).
    case invalidResponse(String)
    /// The journal could not be read or written.
    case journal(String)
    /// A file operation in the cache failed.
    case fileSystem(path: String, underlying: String)
    /// The product is not installed, or has no download, when the call needed one.
    case notFound(productID: String)
    /// The download was cancelled before its content was installed.
    case cancelled(productID: String)
    /// The arguments of a call were not acceptable (for example a malformed product ID).
    case invalidArgument(String)
    /// The server's answer to a JSON request was larger than `limit` bytes (counted as decoded bytes arrive; see
    /// ``KioskClient/Configuration/maximumResponseSize``). Retrying does not help.
    case responseTooLarge(limit: Int)
    /// A grant broke a rule KioskKit enforces on what a server may send: a content URL outside the product's
    /// folder on the server, an unsafe path, more files or bytes than the limits allow. Retrying does not help
    /// until the server is fixed.
    case unsafeGrant(productID: String, problem: GrantProblem)
    /// The server URL is plain `http://` for a host that is not loopback, and
    /// ``KioskClient/Configuration/allowsInsecureHTTP`` is off.
    case insecureServerURL(host: String)
    /// The client was closed (``KioskClient/close()``): create a new one on the same cache root to go on.
    case clientClosed
    /// Another ``KioskClient``, in this process or another, has the cache root at `path` open: one client per cache
    /// root. Close it (or let its process end) first.
    case cacheRootInUse(path: String)
    /// The product's download is on its way (waiting, active, retrying or paused): the call acts on a download that
    /// has ended, or on installed content. Cancel the download first, or wait for it.
    case downloadInProgress(productID: String)
    /// The task that waited for the product's content (``KioskClient/waitUntilInstalled(productID:)``,
    /// ``KioskClient/ensureInstalled(productID:proof:priority:)``, ``KioskClient/update(productID:proof:priority:keepingPrevious:)``)
    /// was cancelled: that wait ended, and the download goes on (``KioskClient/cancel(_:)-(String)`` is what stops it).
    case waitCancelled(productID: String)
    /// A ``URLDownload`` was redirected to another origin (`scheme://host:port`), which a download never follows:
    /// the bytes would come from a server the caller did not name. The bytes already on disk are kept.
    case redirectRefused(from: String, to: String)
    /// A ``URLDownload``'s bytes did not match the SHA-256 expected (the caller's, or else the server's
    /// `Repr-Digest`), even after fetching them again.
    case contentMismatch(url: String, expectedSHA256: String, actualSHA256: String)
    /// A ``URLDownload``'s request was redirected more than `limit` times (a redirect loop).
    case tooManyRedirects(url: String, limit: Int)

    /// A stable machine code for this error, e.g. `not_entitled`, `integrity`, `insufficient_storage`.
    public var code: String {
        switch self {
        case .server(_, let code, _, _): code
        case .integrity: "integrity"
        case .insufficientStorage: "insufficient_storage"
        case .network: "network"
        case .invalidResponse: "invalid_response"
        case .journal: "journal"
        case .fileSystem: "file_system"
        case .notFound: "not_found"
        case .cancelled: "cancelled"
        case .invalidArgument: "invalid_argument"
        case .responseTooLarge: "response_too_large"
        case .unsafeGrant: "unsafe_grant"
        case .insecureServerURL: "insecure_http"
        case .clientClosed: "client_closed"
        case .cacheRootInUse: "cache_root_in_use"
        case .downloadInProgress: "download_in_progress"
        case .waitCancelled: "wait_cancelled"
        case .redirectRefused: "redirect_refused"
        case .contentMismatch: "content_mismatch"
        case .tooManyRedirects: "too_many_redirects"
        }
    }

    /// The server's error code when this is a server error and the code is one this library knows.
    public var apiCode: APIErrorCode? {
        if case .server(_, let code, _, _) = self { return APIErrorCode(rawValue: code) }
        return nil
    }

    /// Whether retrying later, from the bytes on disk, may succeed (network errors, 5xx, 429, 503).
    public var isTransient: Bool {
        switch self {
        case .network: true
        case .server(let status, _, _, _): status == 429 || status == 408 || (500...599).contains(status)
        case .invalidResponse: true
        default: false
        }
    }

    /// Whether the server could not be reached: no network, a host that cannot be found or refuses connections, a
    /// connection lost or timed out (a ``network(code:underlying:)`` with one of those `URLError` codes). A download
    /// that fails so waits for the network (``DownloadState/waitingForNetwork``) instead of using up its retries.
    /// Not TLS failures or malformed URLs, which waiting does not fix.
    public var isUnreachable: Bool {
        guard case .network(let code, _) = self else { return false }
        return Self.unreachableCodes.contains(code)
    }

    private static let unreachableCodes: Set<Int> = Set(
        [
            URLError.timedOut, .cannotFindHost, .cannotConnectToHost, .networkConnectionLost, .dnsLookupFailed,
            .notConnectedToInternet, .internationalRoamingOff, .callIsActive, .dataNotAllowed,
        ].map(\.rawValue))

    /// Whether the proof of purchase was refused or does not entitle the product (`not_entitled`,
    /// `receipt_invalid`, `receipt_malformed`, `transaction_invalid`, `transaction_revoked`, `installation_limit`):
    /// the user must buy or restore; retrying does not help.
    public var isEntitlementRefusal: Bool {
        switch apiCode {
        case .notEntitled?, .receiptInvalid?, .receiptMalformed?, .transactionInvalid?, .transactionRevoked?,
            .installationLimit?:
            true
        default: false
        }
    }

    /// Whether the grant must be renewed (token expired or invalid, version gone).
    public var needsNewGrant: Bool {
        switch apiCode {
        case .tokenExpired?, .tokenInvalid?, .tokenMissing?, .versionGone?, .tokenScope?: true
        default: false
        }
    }

    /// A sentence a person understands.
    public var description: String {
        switch self {
        case .server(let status, let code, let message, _):
            "The server refused the request (\(status) \(code)): \(message)"
        case .integrity(let productID, let path, _, _):
            "The file \(path) of \(productID) was damaged in transit twice; its content did not match what the server announced."
        case .insufficientStorage(let needed, let available):
            if let available {
                "Not enough free space: \(Self.bytes(needed)) still to download, \(Self.bytes(available)) available."
            } else {
                "Not enough free space to store \(Self.bytes(needed)) more."
            }
        case .network(_, let underlying): "The network failed: \(underlying)"
        case .invalidResponse(let detail): "The server sent an unexpected answer: \(detail)"
        case .journal(let detail): "The download journal could not be used: \(detail)"
        case .fileSystem(let path, let underlying): "A file operation on \(path) failed: \(underlying)"
        case .notFound(let productID): "Nothing is known about \(productID) here."
        case .cancelled(let productID): "The download of \(productID) was cancelled."
        case .invalidArgument(let detail): detail
        case .responseTooLarge(let limit):
            "The server's answer was larger than the limit of \(Self.limit(limit)) (maximumResponseSize)."
        case .unsafeGrant(let productID, let problem): "The server's grant for \(productID) was refused: \(problem)."
        case .insecureServerURL(let host):
            "The server \(host) is plain http:// and not on this machine; use https:// or set allowsInsecureHTTP."
        case .clientClosed: "The KioskClient was closed; create a new one on the same cache root to go on."
        case .cacheRootInUse(let path):
            "Another KioskClient has the cache root \(path) open; close it first (one client per cache root)."
        case .downloadInProgress(let productID):
            "The download of \(productID) is on its way; cancel it first, or wait until it ends."
        case .waitCancelled(let productID):
            "The wait for \(productID) was cancelled; its download goes on."
        case .redirectRefused(let from, let to):
            "The server \(from) redirected the download to another origin, \(to), which a download does not follow."
        case .contentMismatch(let url, let expected, let actual):
            "The bytes of \(url) did not match their SHA-256 (expected \(expected), got \(actual))."
        case .tooManyRedirects(let url, let limit):
            "The request for \(url) was redirected more than \(limit) times (a redirect loop)."
        }
    }

    /// Same as ``description``.
    public var errorDescription: String? { description }

    /// A byte limit as people write it: `16 MiB` when it is a whole number of mebibytes.
    static func limit(_ bytes: Int) -> String {
        bytes >= 1 << 20 && bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes) bytes"
    }

    static func bytes(_ count: Int64) -> String {
        ByteCountFormatter.string(fromByteCount: count, countStyle: .file)
    }

    /// Builds a server error from a response status and body, reading the JSON envelope when there is one.
    static func fromResponse(status: Int, body: Data, retryAfter: Double?) -> KioskError {
        if let envelope = try? KioskJSON.decode(APIErrorEnvelope.self, from: body) {
            return .server(status: status, code: envelope.error.code, message: envelope.error.message,
                           retryAfter: retryAfter)
        }
        let fallbackCode: String =
            switch status {
            case 404: APIErrorCode.notFound.rawValue
            case 429: APIErrorCode.tooManyRequests.rawValue
            case 500...599: "server_error"
            default: "http_\(status)"
            }
        return .server(status: status, code: fallbackCode,
                       message: HTTPURLResponse.localizedString(forStatusCode: status), retryAfter: retryAfter)
    }
}
