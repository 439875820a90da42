/// Why a store's location, an object key or a lifetime cannot be signed.
public enum S3SigningError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The endpoint is not an `http` or `https` URL with a host, or it has a user, a password, a query or a
    /// fragment. (The URL is not repeated here: it may hold a password.)
    case invalidEndpoint
    /// The bucket name is empty or longer than 255 bytes, has a character other than letters, digits, `.`, `-` and
    /// `_`, or cannot be a host name for virtual-hosted addressing (3–63 lower-case letters, digits, `-` and `.`,
    /// starting and ending with a letter or digit, and no `.` over https, where the store's certificate would not
    /// cover it).
    case invalidBucket(String)
    /// The region is empty or has a character other than letters, digits, `-` and `_`.
    case invalidRegion(String)
    /// The object key is empty.
    case emptyKey
    /// The object key is longer than S3's 1024 UTF-8 bytes.
    case keyTooLong(utf8Count: Int)
    /// A presigned URL's lifetime is not a whole number of seconds from 1 s to 7 days.
    case expiryOutOfRange(Duration)

    /// What is wrong, in a sentence.
    public var description: String {
        switch self {
        case .invalidEndpoint:
            "an S3 endpoint is an http or https URL with a host, and no user, password, query or fragment"
        case .invalidBucket(let bucket): "'\(bucket)' is not a bucket name this addressing style can use"
        case .invalidRegion(let region): "'\(region)' is not a region name (letters, digits, '-' and '_')"
        case .emptyKey: "an object key cannot be empty"
        case .keyTooLong(let count): "an object key is at most 1024 UTF-8 bytes, not \(count)"
        case .expiryOutOfRange(let expiry): "a presigned URL lives 1 s to 7 days in whole seconds, not \(expiry)"
        }
    }
}
