import Foundation

/// What a client's `Accept-*` fields accept, for the answers that come in several forms (the catalog and grants,
/// gzipped or not).
enum ContentNegotiation {
    /// Whether an `Accept-Encoding` value accepts gzip (RFC 9110 §12.5.3): the quality of an explicit `gzip` or
    /// `x-gzip` entry if there is one, otherwise that of `*`, must be above zero.
    static func acceptsGzip(_ value: String?) -> Bool {
        guard let value else { return false }
        var explicit: Double?
        var wildcard: Double?
        for item in value.lowercased().split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let coding = parts.first else { continue }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.map { Double($0.dropFirst(2)) ?? 0 } ?? 1
            switch coding {
            case "gzip", "x-gzip": explicit = max(explicit ?? 0, quality)
            case "*": wildcard = quality
            default: continue
            }
        }
        return (explicit ?? wildcard ?? 0) > 0
    }
}
