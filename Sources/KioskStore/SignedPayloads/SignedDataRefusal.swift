import Foundation
import KioskCore

/// Why a signed transaction or notification (a JWS) was refused. The server answers every case with
/// `transaction_invalid`, and tells them apart by the envelope's `reason`.
public enum SignedDataRefusal: Error, Sendable, Hashable {
    /// Not a compact JWS, or its header or payload is not the expected JSON.
    case malformed(String)
    /// The header's `alg` is not `ES256` (for example `none` or `HS256`).
    case unsupportedAlgorithm(String)
    /// The `x5c` chain does not hold exactly three certificates (leaf, intermediate, root).
    case chainLength(Int)
    /// A certificate of the chain is not valid DER X.509.
    case certificateMalformed(position: String)
    /// A certificate lacks the Apple extension its position requires.
    case missingAppleOID(position: String, oid: String)
    /// A certificate of the chain was not valid at the payload's `signedDate`.
    case certificateExpired(position: String, signedDate: Date)
    /// The chain does not validate to a trusted root.
    case untrustedChain(String)
    /// The signature does not match the header and payload under the leaf's key.
    case signatureInvalid
    /// The payload is for another app.
    case bundleMismatch(String)
    /// The payload's environment is not one this server accepts.
    case environmentMismatch(String)

    /// A sentence for people. Never contains the JWS itself.
    public var message: String {
        switch self {
        case .malformed(let detail): "The signed data is not a valid JWS: \(detail)."
        case .unsupportedAlgorithm(let alg):
            "The signed data uses the algorithm '\(alg.prefix(16))'; only ES256 is accepted."
        case .chainLength(let count):
            "The signed data's x5c chain has \(count) certificate(s); exactly three are required."
        case .certificateMalformed(let position): "The \(position) certificate of the x5c chain is not valid X.509."
        case .missingAppleOID(let position, let oid):
            "The \(position) certificate lacks Apple's extension \(oid), so Apple did not issue it for this use."
        case .certificateExpired(let position, let signedDate):
            "The \(position) certificate was not valid when the data was signed (\(signedDate.formatted(.iso8601)))."
        case .untrustedChain(let detail):
            "The signed data's certificate chain does not lead to a trusted root (\(detail))."
        case .signatureInvalid: "The signature does not match the signed data."
        case .bundleMismatch(let bundleID):
            "The signed data belongs to another app (\(bundleID.prefix(128)))."
        case .environmentMismatch(let environment):
            "The signed data is from the '\(environment.prefix(32))' environment, which this server does not accept."
        }
    }
}
