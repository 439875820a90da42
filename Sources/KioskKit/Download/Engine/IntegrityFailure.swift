import Foundation

/// Bytes of a download that did not match the grant: a whole file, or one chunk of it.
struct IntegrityFailure: Sendable, Hashable {
    /// The file's path in the grant.
    var path: String
    /// The chunk's index in the file's chunk list, for a chunk; `nil` for the whole file.
    var chunk: Int?
    /// The SHA-256 the grant gives (of the file or of the chunk).
    var expectedSHA256: String
    /// The SHA-256 of the bytes received (empty when the server refused the range: the part was longer than the
    /// file).
    var actualSHA256: String
}
