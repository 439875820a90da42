import Foundation
import KioskCore

/// Why a transfer needs a new grant.
enum GrantNeed: Sendable, Hashable {
    /// The server refused the grant's token (expired, or the version is gone); its error.
    case refused(KioskError)
    /// A file's bytes did not match the grant the first time: the file may have changed on the server.
    case contentMismatch(path: String)

    /// The error the transfer fails with when the renewals are exhausted.
    var error: KioskError {
        switch self {
        case .refused(let error): error
        case .contentMismatch(let path): .invalidResponse("the bytes of \(path) did not match the grant")
        }
    }
}
