import KioskCore

/// How a refused app receipt (`--receipt-validation api`) answers: one that cannot be read is
/// `receipt_malformed` (400), any other refusal `receipt_invalid` (403), with which check failed as the reason.
extension AppReceiptRefusal: APIResponseError {
    /// `receipt_malformed` or `receipt_invalid`.
    public var errorCode: APIErrorCode {
        switch self {
        case .malformed: .receiptMalformed
        case .unsigned, .multipleSigners, .certificateMalformed, .signerCertificateMissing, .unsupportedAlgorithm,
            .signatureInvalid, .untrustedChain, .wrongBundle:
            .receiptInvalid
        }
    }

    /// ``reason``.
    public var errorReason: String? { reason }
}
