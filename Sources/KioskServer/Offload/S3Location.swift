import Foundation

/// Where an S3-compatible store keeps objects: its endpoint, region and bucket, and how an object key becomes a URL
/// there, path-style (`https://host/bucket/key`) or virtual-hosted (`https://bucket.host/key`).
public struct S3Location: Sendable, Hashable {
    /// Where the bucket's name goes in a URL.
    public enum AddressingStyle: String, Sendable, Hashable {
        /// `https://host/bucket/key`: what MinIO, Garage, moto and most S3-compatible stores need.
        case path
        /// `https://bucket.host/key`: AWS's default. The bucket must be a valid host name (no `.` over https).
        case virtualHosted = "virtual"
    }

    /// An object's or a bucket's address: the URL up to its path, the `host` it is signed with, its encoded path.
    struct Target {
        let origin: String
        let host: String
        let path: String

        /// The URL with this query (already encoded; empty for none).
        func url(query: String) throws(S3SigningError) -> URL {
            guard let url = URL(string: origin + path + (query.isEmpty ? "" : "?" + query)) else {
                throw .invalidEndpoint
            }
            return url
        }
    }

    /// The longest object key S3 accepts, in UTF-8 bytes.
    public static let maximumKeyLength = 1024

    /// The region requests are signed for (`us-east-1`, or whatever the store calls itself, such as `garage`).
    public let region: String
    /// The bucket.
    public let bucket: String
    /// Whether the bucket goes in the path or in the host name.
    public let addressingStyle: AddressingStyle
    /// `http` or `https`.
    private let scheme: String
    /// The endpoint's host and port as its URL writes them (`[::1]:9000`, `S3.Example.COM:443`).
    private let authority: String
    /// The `host` as signed: lower-case, with the port only when it is not the scheme's default.
    private let host: String
    /// The endpoint's path, encoded, without a trailing slash: empty, or such as `/s3/v1`.
    private let pathPrefix: String

    /// The bucket `bucket` in `region` at `endpoint` (such as `https://s3.eu-central-1.amazonaws.com` or
    /// `http://127.0.0.1:9000`; a path in it prefixes every object's path).
    public init(endpoint: URL, region: String, bucket: String, addressingStyle: AddressingStyle = .path)
        throws(S3SigningError)
    {
        guard let components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let name = components.host, !name.isEmpty, components.user == nil, components.password == nil,
            components.query == nil, components.fragment == nil
        else { throw .invalidEndpoint }
        guard !region.isEmpty, region.utf8.allSatisfy({ Self.isNameByte($0) || $0 == UInt8(ascii: "_") }) else {
            throw .invalidRegion(region)
        }
        guard Self.isValid(bucket: bucket, style: addressingStyle, overTLS: scheme == "https") else {
            throw .invalidBucket(bucket)
        }
        let literal = name.contains(":") && !name.hasPrefix("[") ? "[\(name)]" : name
        let defaultPort = scheme == "https" ? 443 : 80
        self.scheme = scheme
        self.authority = literal + (components.port.map { ":\($0)" } ?? "")
        self.host = literal.lowercased() + (components.port.map { $0 == defaultPort ? "" : ":\($0)" } ?? "")
        var prefix = Substring(components.path)
        while prefix.hasSuffix("/") { prefix.removeLast() }
        self.pathPrefix = String(prefix).sigV4Encoded(keepingSlash: true)
        self.region = region
        self.bucket = bucket
        self.addressingStyle = addressingStyle
    }

    /// The address of the object at `key`, or of the bucket itself when `key` is nil (to list it). The key is
    /// encoded once, `/` kept: S3 does not normalize or double-encode paths.
    func target(key: String?) throws(S3SigningError) -> Target {
        var objectPath = ""
        if let key {
            guard !key.isEmpty else { throw .emptyKey }
            guard key.utf8.count <= Self.maximumKeyLength else { throw .keyTooLong(utf8Count: key.utf8.count) }
            objectPath = "/" + key.sigV4Encoded(keepingSlash: true)
        }
        switch addressingStyle {
        case .path:
            let path = "\(pathPrefix)/\(bucket)\(objectPath)"
            return Target(origin: "\(scheme)://\(authority)", host: host, path: path)
        case .virtualHosted:
            let path = pathPrefix + objectPath
            return Target(
                origin: "\(scheme)://\(bucket).\(authority)", host: "\(bucket).\(host)",
                path: path.isEmpty ? "/" : path)
        }
    }

    /// Letters, digits, `.`, `-` and `_` for a path, names that need no encoding there; for a host name, 3–63
    /// lower-case letters, digits, `-` and (not over TLS) `.`, with a letter or digit at each end.
    private static func isValid(bucket: String, style: AddressingStyle, overTLS: Bool) -> Bool {
        let bytes = Array(bucket.utf8)
        switch style {
        case .path:
            return (1...255).contains(bytes.count)
                && bytes.allSatisfy { isNameByte($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") }
        case .virtualHosted:
            let lowerOrDigit = { (byte: UInt8) in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            }
            guard (3...63).contains(bytes.count), let first = bytes.first, let last = bytes.last else { return false }
            return lowerOrDigit(first) && lowerOrDigit(last) && !bucket.contains("..")
                && bytes.allSatisfy {
                    lowerOrDigit($0) || $0 == UInt8(ascii: "-") || (!overTLS && $0 == UInt8(ascii: "."))
                }
        }
    }

    /// ASCII letters, digits and `-`.
    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
            true
        default: false
        }
    }
}
