import Foundation

/// Who sends the bytes of an admitted content file (`--offload`, `KIOSK_OFFLOAD`): Kiosk itself when nil, or a
/// front server that Kiosk hands the file over to.
public enum ContentOffload: Sendable, Hashable, CustomStringConvertible {
    /// nginx in front of Kiosk (`nginx:PREFIX`): an admitted file is answered with `X-Accel-Redirect: PREFIX/…`
    /// and nginx sends it from its `internal` locations `PREFIX/` and `PREFIX-full/` (see ``NginxOffload`` and
    /// `deploy/nginx/kiosk-offload.conf`).
    case nginx(prefix: String)
    /// An S3-compatible store (`s3:BUCKET[/PREFIX]`): grants give each file a presigned URL of the object
    /// `kiosk content push` uploaded under `prefix` in `bucket` (see ``S3ContentOffload``). The store's endpoint,
    /// region, addressing, credentials and the URLs' lifetime are settings of their own (`--s3-…`).
    case s3(bucket: String, prefix: String)

    /// Reads `nginx:PREFIX`: PREFIX an absolute path of RFC 3986 unreserved characters and `/`, not ending in `/`,
    /// outside Kiosk's own `/v1/` and `/sandbox/` (nginx must not proxy it back to Kiosk); or `s3:BUCKET[/PREFIX]`:
    /// a bucket name of letters, digits, `.`, `-` and `_` (the store checks the rest), and a key prefix. Nil when it
    /// is neither.
    public init?(parsing text: String) {
        if text.hasPrefix("s3:") {
            let rest = text.dropFirst("s3:".count)
            let bucket = String(rest.prefix { $0 != "/" })
            var prefix = String(rest.dropFirst(bucket.count + 1))
            while prefix.hasSuffix("/") { prefix.removeLast() }
            guard (1...255).contains(bucket.utf8.count),
                bucket.unicodeScalars.allSatisfy({
                    $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0))
                }),
                prefix.utf8.count <= 512, !prefix.hasPrefix("/"), !prefix.contains("//"),
                prefix.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
            else { return nil }
            self = .s3(bucket: bucket, prefix: prefix)
            return
        }
        guard text.hasPrefix("nginx:") else { return nil }
        let prefix = String(text.dropFirst("nginx:".count))
        // Unreserved characters and `/` only: the text that goes into X-Accel-Redirect and nginx's locations as is.
        guard prefix.sigV4Encoded(keepingSlash: true) == prefix, prefix.count > 1, prefix.hasPrefix("/"),
            !prefix.hasSuffix("/"), !prefix.contains("//"),
            !prefix.split(separator: "/").contains(where: { $0 == "." || $0 == ".." }),
            !["/v1", "/sandbox"].contains(where: { prefix == $0 || prefix.hasPrefix($0 + "/") })
        else { return nil }
        self = .nginx(prefix: prefix)
    }

    /// The setting's text, `nginx:PREFIX` or `s3:BUCKET[/PREFIX]`.
    public var description: String {
        switch self {
        case .nginx(let prefix): "nginx:\(prefix)"
        case .s3(let bucket, let prefix): "s3:\(bucket)\(prefix.isEmpty ? "" : "/" + prefix)"
        }
    }
}
