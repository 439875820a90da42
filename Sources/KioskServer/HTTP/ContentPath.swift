import Foundation
import KioskCore

/// The product, version and file a content or subchunk request names, decoded and checked (see
/// ``ContentPath/init(rawPath:under:)``).
struct ContentPath: Equatable {
    /// The product.
    var productID: String
    /// Its content version.
    var version: String
    /// The file's path inside the version, percent-decoded (`Contents/My Issue.pdf`).
    var filePath: String
}

extension ContentPath {
    /// The product, version and file of a raw request path `<prefix><product_id>/<content_version>/<path>`, split and
    /// percent-decoded: the rule of every route that names a file of a version (content, subchunks). Any traversal
    /// (`..`, `.`, empty segments, an encoded `/` or NUL) or an identifier outside the safe alphabet is refused.
    init?(rawPath: String, under prefix: String) {
        guard rawPath.hasPrefix(prefix), rawPath.utf8.count <= 2048 else { return nil }
        guard let segments = PathSegments.decode(Substring(rawPath).utf8.dropFirst(prefix.utf8.count)),
            segments.count >= 3
        else { return nil }
        let filePath = segments[2...].joined(separator: "/")
        guard Identifiers.isValidProductID(segments[0]), Identifiers.isValidContentVersion(segments[1]),
            Identifiers.isValidFilePath(filePath)
        else { return nil }
        self.init(productID: segments[0], version: segments[1], filePath: filePath)
    }
}
