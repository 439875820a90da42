import Foundation

/// The segments of a raw request path, split on `/` and percent-decoded one by one: the first rule of every route
/// that names a file. An empty segment (`//`, a trailing `/`), a segment that decodes to nothing or to a `/` or a
/// NUL, or bad percent-encoding refuses the whole path; what each route accepts beyond that is its own rule.
enum PathSegments {
    /// The decoded segments of `raw` (the part of the path after a route's prefix), or nil.
    static func decode(_ raw: Substring.UTF8View) -> [String]? {
        // Split on the bytes: a path is ASCII unless percent-decoded, and splitting on characters would walk
        // grapheme clusters.
        let rawSegments = raw.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        var segments: [String] = []
        segments.reserveCapacity(rawSegments.count)
        for rawBytes in rawSegments {
            let raw = Substring(rawBytes)
            guard
                let decoded = raw.utf8.contains(UInt8(ascii: "%")) ? String(raw).removingPercentEncoding : String(raw),
                !decoded.isEmpty, !decoded.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == 0 })
            else { return nil }
            segments.append(decoded)
        }
        return segments
    }
}
