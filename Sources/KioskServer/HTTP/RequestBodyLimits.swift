/// The size limits of request bodies that the configuration does not set (``ServerConfiguration/maxJSONBodySize``
/// sets the others).
enum RequestBodyLimits {
    /// A receipt of 3 MiB plus the JSON around it: restores, grants, installations and the sandbox's `verifyReceipt`.
    static let receipt = ReceiptVerifier.maximumReceiptLength + 16 * 1024
}
