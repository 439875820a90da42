import Foundation
import KioskCore

/// Where one file's bytes come from, and how a request for them proves that it may have them: Kiosk's own
/// content URL with the grant's bearer token, or an object store's presigned URL, whose query is its proof.
struct ContentSource: Sendable {
    /// The absolute URL of the file's bytes.
    var url: URL
    /// The grant's token for Kiosk's own URL; nil for a presigned URL. A presigned request carries no
    /// `Authorization` (S3 refuses one beside a signed query, and the token must not leave Kiosk's origin) and no
    /// `If-Range` (the store's validators are not Kiosk's: a file is verified by its SHA-256 and its chunks'), and
    /// its `ETag` is not kept.
    var token: String?

    /// Whether the bytes come from a presigned URL.
    var isPresigned: Bool { token == nil }

    /// The source of `file` in `grant`: its presigned URL when the grant gives one (checked by
    /// ``GrantValidation/presignedURL(of:in:)``), else its URL on the server (``APIClient/contentURL(for:in:)``).
    static func of(_ file: GrantFile, in grant: Grant, api: APIClient) throws(KioskError) -> ContentSource {
        if let presigned = try GrantValidation.presignedURL(of: file, in: grant) {
            return ContentSource(url: presigned, token: nil)
        }
        return ContentSource(url: try api.contentURL(for: file, in: grant), token: grant.token)
    }
}
