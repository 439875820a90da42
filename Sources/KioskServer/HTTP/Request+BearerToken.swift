import Foundation
import Hummingbird

extension Request {
    /// The grant token a content, pack or subchunk request carries: `Authorization: Bearer <token>`, or `?token=` for
    /// clients that cannot set headers. Checked by ``ContentAccess/claims(for:)``.
    var bearerToken: String? {
        if let authorization = headers[.authorization] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return uri.queryParameters.get("token")
    }
}
