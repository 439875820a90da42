import Foundation
import KioskCore

/// Why a grant was refused (see ``KioskError/unsafeGrant(productID:problem:)``). Text the server sent is kept
/// shortened to 128 characters.
public enum GrantProblem: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The grant is for another product than the one asked for.
    case otherProduct(String)
    /// The content version is not a safe identifier.
    case invalidVersion(String)
    /// A file path is not a safe relative path.
    case invalidPath(String)
    /// A file path is longer than ``GrantLimits/maximumPathLength`` bytes.
    case pathTooLong(bytes: Int, limit: Int)
    /// A file has a negative length or a malformed SHA-256.
    case invalidFile(path: String)
    /// A file is listed twice.
    case duplicatePath(String)
    /// A file's URL is not a path under `/v1/content/<product>/<version>/` on the server's own origin.
    case contentURL(path: String, url: String)
    /// The grant's subchunk URL is not `/v1/subchunks/<product>/<version>` on the server's own origin.
    case subchunksURL(String)
    /// A file's presigned URL is not an `https://` URL (or `http://` to a loopback host) with a host and a query,
    /// no user or fragment, of at most ``GrantLimits/maximumPresignedURLLength`` bytes. `url` keeps its scheme,
    /// host and path only: its query is a credential.
    case presignedURL(path: String, url: String)
    /// More files than ``GrantLimits/maximumFileCount``.
    case tooManyFiles(count: Int, limit: Int)
    /// `total_length` is larger than ``GrantLimits/maximumTotalLength``.
    case totalLengthTooLarge(Int64, limit: Int64)
    /// `total_length` is not the sum of the files' lengths.
    case totalLengthMismatch(declared: Int64, sum: Int64)
    /// Its `chunking` (`field` "chunking") or `subchunks.chunking` (`field` "subchunks.chunking") is outside
    /// ``GrantLimits/chunkingBounds``.
    case chunking(field: String, minimum: Int, average: Int, maximum: Int)

    /// A sentence fragment a person understands.
    public var description: String {
        switch self {
        case .otherProduct(let other): "it is for another product (\(other))"
        case .invalidVersion(let version): "its content version '\(version)' is not a safe name"
        case .invalidPath(let path): "the file path '\(path)' is not a safe relative path"
        case .pathTooLong(let bytes, let limit): "a file path is \(bytes) bytes long, over the limit of \(limit)"
        case .invalidFile(let path): "the file \(path) has a negative length or a malformed SHA-256"
        case .duplicatePath(let path): "the file \(path) is listed twice"
        case .contentURL(let path, let url):
            "the URL '\(url)' of \(path) is not a path under /v1/content/<product>/<version>/ on the server"
        case .subchunksURL(let url): "its subchunk URL '\(url)' is not /v1/subchunks/<product>/<version> on the server"
        case .presignedURL(let path, let url):
            "the presigned URL '\(url)' of \(path) is not an https:// URL (or http:// to a loopback host) with a query"
        case .tooManyFiles(let count, let limit): "it lists \(count) files, over the limit of \(limit)"
        case .totalLengthTooLarge(let total, let limit): "its total_length \(total) is over the limit of \(limit) bytes"
        case .totalLengthMismatch(let declared, let sum):
            "its total_length \(declared) is not the sum of its files' lengths (\(sum))"
        case .chunking(let field, let minimum, let average, let maximum):
            "its \(field) (minimum \(minimum), average \(average), maximum \(maximum) bytes) is outside what this "
                + "client accepts (minimum at least \(GrantLimits.chunkingBounds.smallestMinimum), average at least "
                + "\(GrantLimits.chunkingBounds.smallestAverage), maximum at most "
                + "\(GrantLimits.chunkingBounds.largestMaximum))"
        }
    }

    /// Server text as kept in a problem: at most 128 characters.
    static func excerpt(_ text: String) -> String { text.count <= 128 ? text : text.prefix(127) + "…" }
}
