import Foundation
import KioskCore

/// Content sent by an S3-compatible store (`--offload s3:BUCKET[/PREFIX]`): each file of a grant gets a presigned GET
/// URL of its object (``GrantFile/presignedURL``), which `kiosk content push` uploaded under the same prefix, so that
/// the store (or a CDN in front of it) sends the bytes. Kiosk keeps serving `/v1/content` as before, for clients that
/// do not read presigned URLs; packs, subchunk lists and everything else stay on Kiosk.
///
/// URLs are signed at the start of a window of half their lifetime, so every grant of a version within one window
/// carries the same URLs (its file list is encoded once per window) and each URL has at least half its lifetime left
/// when it is handed out. A grant's `expires_at` is when its URLs expire if that comes before its token does, so that
/// a client renews the grant, and with it the URLs, in time. Revocation cannot reach a URL already handed out: it
/// opens its object until it expires (at most ``urlLifetime``); every renewal checks the token and the purchase again.
public struct S3ContentOffload: Sendable {
    /// The shortest lifetime of a presigned URL: two seconds, so that a window is at least one whole second (SigV4
    /// dates are in seconds).
    public static let shortestURLLifetime = Duration.seconds(2)
    /// The default lifetime of a presigned URL: five minutes.
    public static let defaultURLLifetime = Duration.seconds(300)

    /// Signs the URLs (the store, the bucket and the keys).
    public let signer: SigV4Signer
    /// The key prefix the content was pushed under (no trailing `/`; empty for the bucket's root).
    public let prefix: String
    /// How long a presigned URL opens its object after it was signed.
    public let urlLifetime: Duration

    /// An offload to the bucket of `signer` under `prefix`, with URLs living `urlLifetime` (whole seconds, from
    /// ``shortestURLLifetime`` to SigV4's seven days).
    public init(signer: SigV4Signer, prefix: String, urlLifetime: Duration = defaultURLLifetime) throws(S3SigningError)
    {
        guard urlLifetime.components.attoseconds == 0, urlLifetime >= Self.shortestURLLifetime,
            urlLifetime <= SigV4Signer.longestExpiry
        else { throw .expiryOutOfRange(urlLifetime) }
        var prefix = prefix
        while prefix.hasSuffix("/") { prefix.removeLast() }
        self.signer = signer
        self.prefix = prefix
        self.urlLifetime = urlLifetime
    }

    /// When the URLs of a grant issued at `now` are signed: the start of the window (half the lifetime, in whole
    /// seconds) that `now` falls in.
    public func signingTime(for now: Date) -> Date {
        let window = Double(max(1, urlLifetime.components.seconds / 2))
        return Date(timeIntervalSince1970: (now.timeIntervalSince1970 / window).rounded(.down) * window)
    }

    /// When URLs signed at `signedAt` stop opening their objects.
    public func expiry(ofURLsSignedAt signedAt: Date) -> Date {
        signedAt.addingTimeInterval(TimeInterval(urlLifetime.components.seconds))
    }

    /// The presigned GET URL, signed at `signedAt`, of the object of `path` in `version` of `productID`: the key
    /// `kiosk content push` gives it (``ContentPush/key(prefix:productID:version:path:)``).
    public func presignedURL(productID: String, version: String, path: String, signedAt: Date)
        throws(S3SigningError) -> String
    {
        let key = ContentPush.key(prefix: prefix, productID: productID, version: version, path: path)
        return try signer.presignedURL(key: key, expires: urlLifetime, at: signedAt).absoluteString
    }
}
