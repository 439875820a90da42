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
        let raw = Substring(rawPath).utf8.dropFirst(prefix.utf8.count)
        let productID: String
        let version: String
        let filePath: String
        if raw.contains(UInt8(ascii: "%")) {
            guard let segments = PathSegments.decode(raw), segments.count >= 3 else { return nil }
            (productID, version, filePath) = (segments[0], segments[1], segments[2...].joined(separator: "/"))
        } else {
            // Nothing to decode (every grant URL): the two first segments and the rest, as they are. The checks
            // below refuse what decoding would (empty segments, NUL), since none of them allows an empty component.
            let slash = UInt8(ascii: "/")
            guard let first = raw.firstIndex(of: slash),
                let second = raw[raw.index(after: first)...].firstIndex(of: slash)
            else { return nil }
            productID = String(Substring(raw[..<first]))
            version = String(Substring(raw[raw.index(after: first)..<second]))
            filePath = String(Substring(raw[raw.index(after: second)...]))
        }
        guard Identifiers.isValidProductID(productID), Identifiers.isValidContentVersion(version),
            Identifiers.isValidFilePath(filePath)
        else { return nil }
        self.init(productID: productID, version: version, filePath: filePath)
    }
}
