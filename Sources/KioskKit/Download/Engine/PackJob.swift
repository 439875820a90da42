import Crypto
import Foundation
import KioskCore

/// A run of a grant's files fetched with one ranged request of its pack.
struct PackJob: Sendable {
    /// The files, consecutive in the grant.
    var files: [GrantFile]
    /// Where the first starts in the pack.
    var start: Int64
    var url: URL
    var grant: Grant
    var grantReceivedAt: Date?
    var productID: String
    /// The transfer's hash failures, shared by its files.
    var integrity: Locked<IntegrityCounts>

    /// The length of the run.
    var length: Int64 { files.reduce(0) { $0 + $1.length } }
}
