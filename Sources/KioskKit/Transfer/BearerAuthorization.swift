import Foundation

/// The `Authorization` field that carries a grant's token (RFC 6750), for every request that opens content: ranges
/// of files and packs, and subchunk lists. The token is never logged.
enum BearerAuthorization {
    /// The field's name.
    static let name = "Authorization"

    /// The field's value for `token`.
    static func value(_ token: String) -> String { "Bearer \(token)" }
}
