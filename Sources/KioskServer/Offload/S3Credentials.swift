/// The keys that sign requests to a store: an access key ID, its secret and, for temporary credentials, a session
/// token. No description of them shows the secret or the token, so logging one is safe.
public struct S3Credentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The access key ID, which every signed request names in the clear.
    public let accessKeyID: String
    let secretAccessKey: String
    let sessionToken: String?

    /// Credentials with this key ID and secret and, for temporary credentials (STS), their session token.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// The key ID, with the secret (and the token, if any) shown as redacted.
    public var description: String {
        "S3Credentials(accessKeyID: \(accessKeyID), secret: redacted\(sessionToken == nil ? "" : ", token: redacted"))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The key ID alone, so that `dump` and debuggers show no secret either.
    public var customMirror: Mirror { Mirror(self, children: ["accessKeyID": accessKeyID], displayStyle: .struct) }
}
