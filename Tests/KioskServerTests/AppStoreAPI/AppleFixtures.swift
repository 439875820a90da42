import Foundation

/// Real data from Apple and public libraries, copied byte for byte into `Fixtures/apple` (its README names each
/// file's source, commit and licence): App Store Server API bodies, receipts, signed data with a test root.
enum AppleFixtures {
    /// The folder.
    static let folder = Bundle.module.url(forResource: "apple", withExtension: nil, subdirectory: "Fixtures")!
}
