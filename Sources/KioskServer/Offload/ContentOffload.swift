/// Who sends the bytes of an admitted content file (`--offload`, `KIOSK_OFFLOAD`): Kiosk itself when nil, or a
/// front server that Kiosk hands the file over to.
public enum ContentOffload: Sendable, Hashable, CustomStringConvertible {
    /// nginx in front of Kiosk (`nginx:PREFIX`): an admitted file is answered with `X-Accel-Redirect: PREFIX/…`
    /// and nginx sends it from its `internal` locations `PREFIX/` and `PREFIX-full/` (see ``NginxOffload`` and
    /// `deploy/nginx/kiosk-offload.conf`).
    case nginx(prefix: String)

    /// Reads `nginx:PREFIX`: PREFIX an absolute path of RFC 3986 unreserved characters and `/`, not ending in `/`,
    /// outside Kiosk's own `/v1/` and `/sandbox/` (nginx must not proxy it back to Kiosk); nil when it is not one.
    public init?(parsing text: String) {
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

    /// The setting's text, `nginx:PREFIX`.
    public var description: String {
        switch self {
        case .nginx(let prefix): "nginx:\(prefix)"
        }
    }
}
