/// Why an S3-compatible store did not do what was asked. Never holds a credential or a signature.
public enum S3StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The store answered `status` for the object `key` (the bucket when nil), with S3's error `code` when its body
    /// named one (`NoSuchBucket`, `AccessDenied`, `SignatureDoesNotMatch`…).
    case refused(status: Int, key: String?, code: String?)
    /// A file is larger than one `PUT` may carry (5 GiB): it goes in a multipart upload instead.
    case tooLargeForOnePut(key: String, length: Int64)
    /// A file is larger than a multipart upload of that part size may carry (10,000 parts).
    case tooManyParts(key: String, length: Int64, partSize: Int64)
    /// The store's answer to a multipart call could not be read (no `UploadId`, no part `ETag`).
    case unreadableAnswer(key: String, call: String)
    /// A file changed while it was uploaded: its bytes no longer have the SHA-256 the catalog recorded.
    case fileChanged(path: String)

    /// The most one `PUT` may carry: 5 GiB.
    public static let largestPut: Int64 = 5 << 30

    /// What happened, in a sentence.
    public var description: String {
        switch self {
        case .refused(let status, let key, let code):
            "the store answered \(status)\(code.map { " \($0)" } ?? "") for "
                + (key.map { "the object \($0)" } ?? "the bucket")
        case .tooLargeForOnePut(let key, let length):
            "\(key) has \(length) bytes, more than one PUT may carry (5 GiB)"
        case .tooManyParts(let key, let length, let partSize):
            "\(key) has \(length) bytes, more than 10,000 parts of \(partSize) bytes"
        case .unreadableAnswer(let key, let call):
            "the store's answer to \(call) for the object \(key) could not be read"
        case .fileChanged(let path):
            "\(path) changed while it was uploaded; run the push again"
        }
    }
}
