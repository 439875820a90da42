import Foundation
import KioskCore

/// The checks every grant passes before KioskKit uses it, when it arrives and again when it is read back from the
/// journal, so that a grant journaled by an older, laxer KioskKit cannot trap a later launch.
enum GrantValidation {
    /// Checks `grant` against the product asked for and the limits.
    static func validate(_ grant: Grant, productID: String, limits: GrantLimits) throws(KioskError) {
        func refuse(_ problem: GrantProblem) -> KioskError { .unsafeGrant(productID: productID, problem: problem) }
        guard grant.productID == productID else { throw refuse(.otherProduct(GrantProblem.excerpt(grant.productID))) }
        guard Identifiers.isValidContentVersion(grant.contentVersion) else {
            throw refuse(.invalidVersion(GrantProblem.excerpt(grant.contentVersion)))
        }
        guard grant.files.count <= limits.maximumFileCount else {
            throw refuse(.tooManyFiles(count: grant.files.count, limit: limits.maximumFileCount))
        }
        guard grant.totalLength >= 0, grant.totalLength <= limits.maximumTotalLength else {
            throw refuse(.totalLengthTooLarge(grant.totalLength, limit: limits.maximumTotalLength))
        }
        var sum: Int64 = 0
        var paths = Set<String>()
        for file in grant.files {
            let bytes = file.path.utf8.count
            guard bytes <= GrantLimits.maximumPathLength else {
                throw refuse(.pathTooLong(bytes: bytes, limit: GrantLimits.maximumPathLength))
            }
            guard Identifiers.isValidFilePath(file.path) else {
                throw refuse(.invalidPath(GrantProblem.excerpt(file.path)))
            }
            guard file.length >= 0, isDigest(file.sha256) else {
                throw refuse(.invalidFile(path: file.path))
            }
            guard paths.insert(file.path).inserted else { throw refuse(.duplicatePath(file.path)) }
            _ = try contentPath(of: file, in: grant)
            _ = try presignedURL(of: file, in: grant)
            let (next, overflow) = sum.addingReportingOverflow(file.length)
            guard !overflow, next <= limits.maximumTotalLength else {
                throw refuse(.totalLengthTooLarge(overflow ? .max : next, limit: limits.maximumTotalLength))
            }
            sum = next
        }
        guard sum == grant.totalLength else {
            throw refuse(.totalLengthMismatch(declared: grant.totalLength, sum: sum))
        }
        if grant.subchunks != nil { _ = try subchunksURL(of: grant) }
        try checkAffordable(grant.chunking, field: "chunking", productID: productID)
        try checkAffordable(grant.subchunks?.chunking, field: "subchunks.chunking", productID: productID)
        guard let chunking = grant.chunking, chunking.isSupported else { return }
        var chunkCount = 0
        for file in grant.files {
            guard let chunks = file.chunks else { continue }
            chunkCount += chunks.count
            guard chunkCount <= limits.maximumChunkCount else {
                throw KioskError.invalidResponse(
                    "the grant of \(productID) lists over \(limits.maximumChunkCount) chunks")
            }
            try validateChunks(chunks, of: file, chunking: chunking)
        }
    }

    /// Refuses `parameters` that this client would cut with (``ChunkingParameters/isSupported``) but that lie
    /// outside ``GrantLimits/chunkingBounds``. Parameters it does not cut with are ignored: the files are verified
    /// whole.
    private static func checkAffordable(
        _ parameters: ChunkingParameters?, field: String, productID: String
    ) throws(KioskError) {
        guard let parameters, parameters.isSupported, !GrantLimits.chunkingBounds.admit(parameters) else { return }
        throw .unsafeGrant(
            productID: productID,
            problem: .chunking(
                field: field, minimum: parameters.minimum, average: parameters.average, maximum: parameters.maximum))
    }

    /// Checks one file's chunks: in order and contiguous from offset 0 to the file's length, each 1 to
    /// `chunking.maximum` bytes long with a 64-digit hex SHA-256, and no more of them than content-defined cuts allow
    /// (every chunk but the last is at least `chunking.minimum` bytes long).
    static func validateChunks(
        _ chunks: [GrantChunk], of file: GrantFile, chunking: ChunkingParameters
    ) throws(KioskError) {
        try validateCover(chunks, of: 0..<file.length, chunking: chunking) { reason in
            "the chunks of \(GrantProblem.excerpt(file.path)) are invalid: \(reason)"
        }
    }

    /// Checks that `pieces` (chunks of a file, or subchunks of a chunk) cover `range` of the file exactly: in order
    /// and contiguous, each 1 to `chunking.maximum` bytes long with a 64-digit hex SHA-256, and no more of them than
    /// content-defined cuts allow (every piece but the last is at least `chunking.minimum` bytes long). A failure is
    /// ``KioskError/invalidResponse(_:)`` with `describe`'s text for the reason.
    static func validateCover(
        _ pieces: [GrantChunk], of range: Range<Int64>, chunking: ChunkingParameters,
        describe: (String) -> String
    ) throws(KioskError) {
        func refuse(_ reason: String) -> KioskError { .invalidResponse(describe(reason)) }
        let length = range.upperBound - range.lowerBound
        let bound = length / Int64(max(1, chunking.minimum)) + 1
        guard Int64(pieces.count) <= bound else { throw refuse("\(pieces.count) chunks, over \(bound)") }
        var next = range.lowerBound
        for (index, piece) in pieces.enumerated() {
            guard piece.offset == next else { throw refuse("chunk \(index) starts at \(piece.offset), not \(next)") }
            guard piece.length >= 1, piece.length <= Int64(chunking.maximum), piece.length <= range.upperBound - next
            else {
                throw refuse("chunk \(index) is \(piece.length) bytes long")
            }
            guard isDigest(piece.sha256) else {
                throw refuse("chunk \(index) has a malformed SHA-256")
            }
            next += piece.length  // at most range.upperBound: checked above
        }
        guard next == range.upperBound else { throw refuse("they cover \(next - range.lowerBound) of \(length) bytes") }
    }

    /// The chunks to fetch and verify `file` by, when the grant's chunking is one this client cuts (an unknown
    /// algorithm or none: `nil`, the file is verified whole). Call on a validated grant.
    static func chunks(of file: GrantFile, in grant: Grant) -> [GrantChunk]? {
        guard let chunks = file.chunks, !chunks.isEmpty, grant.chunking?.isSupported == true else { return nil }
        return chunks
    }

    /// The server path of `file`'s subchunks: the grant's ``GrantSubchunks/url``, which must be exactly
    /// `/v1/subchunks/<product>/<version>`, followed by the file's path as its checked content URL spells it.
    static func subchunkPath(of file: GrantFile, in grant: Grant) throws(KioskError) -> String {
        let expected = try subchunksURL(of: grant)
        let content = try contentPath(of: file, in: grant)  // "/v1/content/<product>/<version>/<path>"
        let version = "/v1/content/\(grant.productID)/\(grant.contentVersion)"
        return expected + String(decoding: content.utf8.dropFirst(version.utf8.count), as: UTF8.self)
    }

    /// The grant's ``GrantSubchunks/url``, checked: exactly `/v1/subchunks/<product>/<version>`.
    static func subchunksURL(of grant: Grant) throws(KioskError) -> String {
        let url = grant.subchunks?.url ?? ""
        guard url == "/v1/subchunks/\(grant.productID)/\(grant.contentVersion)" else {
            throw .unsafeGrant(productID: grant.productID, problem: .subchunksURL(GrantProblem.excerpt(url)))
        }
        return url
    }

    /// The percent-encoded path of `file`'s URL, checked: until offload exists, the only valid form is
    /// `/v1/content/<product>/<version>/<path>` with the grant's product and version, where `<path>` is made of
    /// percent-encoded segments that decode to a safe relative path. No scheme, host, query, fragment, dot segment
    /// or encoded slash.
    static func contentPath(of file: GrantFile, in grant: Grant) throws(KioskError) -> String {
        let refusal = KioskError.unsafeGrant(
            productID: grant.productID, problem: .contentURL(path: file.path, url: GrantProblem.excerpt(file.url)))
        let prefix = "/v1/content/\(grant.productID)/\(grant.contentVersion)/"
        guard Identifiers.isValidProductID(grant.productID), Identifiers.isValidContentVersion(grant.contentVersion),
            file.url.utf8.count <= prefix.utf8.count + 3 * GrantLimits.maximumPathLength,
            file.url.hasPrefix(prefix)
        else { throw refusal }
        let rest = Substring(file.url.utf8.dropFirst(prefix.utf8.count))
        var decoded: [String] = []
        for segment in rest.split(separator: "/", omittingEmptySubsequences: false) {
            guard let text = percentDecoded(segment), !text.contains("/") else { throw refusal }
            decoded.append(text)
        }
        guard Identifiers.isValidFilePath(decoded.joined(separator: "/")) else { throw refusal }
        return file.url
    }

    /// `file`'s presigned URL (``GrantFile/presignedURL``), checked, or nil when the grant gives none: an absolute
    /// `https://` URL, or `http://` to a loopback host (a store emulated on the same machine), with a host and a
    /// query (its signature), no user, password or fragment, at most ``GrantLimits/maximumPresignedURLLength``
    /// bytes. Such a URL may be on another origin than the server's: it is the only one that may, and requests for
    /// it carry no token (see ``ContentSource``).
    static func presignedURL(of file: GrantFile, in grant: Grant) throws(KioskError) -> URL? {
        guard let text = file.presignedURL else { return nil }
        let components = URLComponents(string: text)
        let scheme = components?.scheme?.lowercased()
        guard text.utf8.count <= GrantLimits.maximumPresignedURLLength, let components,
            let host = components.host, !host.isEmpty,
            scheme == "https" || (scheme == "http" && LoopbackAddress.contains(host)),
            components.user == nil, components.password == nil, components.fragment == nil,
            let query = components.percentEncodedQuery, !query.isEmpty, let url = components.url
        else {
            // The query is a credential, and so is a user: only the scheme, host and path go into the error.
            var shown = Substring(text.split(separator: "?", maxSplits: 1).first ?? "")
            if let at = shown.lastIndex(of: "@"), let slashes = shown.range(of: "//"), slashes.upperBound <= at {
                shown = shown[..<slashes.upperBound] + shown[shown.index(after: at)...]
            }
            throw .unsafeGrant(
                productID: grant.productID,
                problem: .presignedURL(path: file.path, url: GrantProblem.excerpt(String(shown))))
        }
        return url
    }

    /// A path segment with its `%XX` escapes decoded; `nil` when it holds a character a path may not carry
    /// unescaped (anything but RFC 3986 `pchar`), a malformed escape, or bytes that are not UTF-8.
    static func percentDecoded(_ segment: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = segment.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            } else {
                guard isPathCharacter(byte) else { return nil }
                bytes.append(byte)
            }
        }
        return String(bytes: bytes, encoding: .utf8)
    }

    /// Whether `text` is a SHA-256 in hex: 64 hex digits.
    static func isDigest(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { hexValue($0) != nil }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// RFC 3986 `pchar` without `%`: unreserved, sub-delims, `:` and `@`.
    private static func isPathCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: "-._~!$&'()*+,;=:@".utf8.contains(byte)
        }
    }

    /// Throws the `token_expired` refusal a request with `grant` would get soon: a grant is not used within its
    /// last moments of trust (``trustedUntil(_:receivedAt:)``), so that a request does not start just before the
    /// token stops opening content.
    static func requireTrusted(_ grant: Grant, receivedAt: Date?, now: Date = Date()) throws(KioskError) {
        guard trustedUntil(grant, receivedAt: receivedAt) <= now else { return }
        throw KioskError.server(
            status: 401, code: APIErrorCode.tokenExpired.rawValue, message: "The grant is about to expire.",
            retryAfter: nil)
    }

    /// Until when a grant received at `receivedAt` may be used: its `expires_at`, but never more than
    /// ``GrantLimits/maximumTrust`` after it arrived. A grant of unknown age (journaled by an older KioskKit) is not
    /// trusted at all.
    static func trustedUntil(_ grant: Grant, receivedAt: Date?) -> Date {
        guard let receivedAt else { return .distantPast }
        return min(grant.expiresAt, receivedAt.addingTimeInterval(GrantLimits.maximumTrust))
    }
}
