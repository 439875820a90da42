import Foundation

/// The URL scheme of what a grant opens, relative to the server: the content, pack and subchunk resources of a
/// product version. The grant writes these URLs (``GrantFileList``) and the routes parse them (``ContentPath``,
/// ``PackRoutes``, ``SubchunkRoutes``).
enum GrantURLs {
    /// Where every file's content resource starts: `/v1/content/<product>/<version>/<path>`.
    static let contentPrefix = "/v1/content/"
    /// Where every pack resource starts: `/v1/packs/<product>/<version>`.
    static let packPrefix = "/v1/packs/"
    /// Where every subchunk resource starts: `/v1/subchunks/<product>/<version>/<path>`.
    static let subchunksPrefix = "/v1/subchunks/"

    /// The path of a version's pack (``GrantPack``). Product IDs and versions are made of URL-safe characters.
    static func pack(product: String, version: String) -> String { packPrefix + "\(product)/\(version)" }

    /// The path of a version's subchunks (``GrantSubchunks``); a file's is this followed by `/` and the file's path,
    /// percent-encoded as in ``content(product:version:path:)``.
    static func subchunks(product: String, version: String) -> String {
        subchunksPrefix + "\(product)/\(version)"
    }

    /// `/v1/content/<product>/<version>/<path>` with each path segment percent-encoded.
    static func content(product: String, version: String, path: String) -> String {
        let encoded = path.split(separator: "/").map { segment in
            // Unreserved characters are never encoded: most segments are made of them only, and skip the slower
            // encoding (a grant of 20,000 files builds 20,000 URLs).
            guard segment.utf8.allSatisfy(isUnreserved) else {
                return String(segment).addingPercentEncoding(withAllowedCharacters: segmentAllowed) ?? String(segment)
            }
            return String(segment)
        }
        return contentPrefix + "\(product)/\(version)/" + encoded.joined(separator: "/")
    }

    /// The characters a path segment keeps as they are.
    private static let segmentAllowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))

    /// RFC 3986 unreserved: letters, digits, `-`, `.`, `_`, `~`.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
