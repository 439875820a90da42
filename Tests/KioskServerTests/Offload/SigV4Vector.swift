import Foundation
import HTTPTypes
import KioskServer
import Testing

/// One case of `scripts/oracles/sigv4-vectors.py`: what botocore was given and what it made of it.
struct SigV4Vector: Decodable, Sendable, CustomTestStringConvertible {
    /// The fixture's or the script's whole answer.
    struct Batch: Decodable, Sendable {
        let botocore: String
        let presigned: [SigV4Vector]
        let headerSigned: [SigV4Vector]
    }

    /// A query item or a header field.
    struct Field: Decodable, Sendable {
        let name: String
        let value: String
    }

    let name: String
    let endpoint: String
    let region: String
    let bucket: String
    let addressing: String
    let accessKeyID: String
    let secretAccessKey: String
    let sessionToken: String?
    /// The time signed, as botocore writes it, and in seconds since 1970.
    let date: String
    let seconds: Int
    let method: String
    /// The object's key; nil for a request to the bucket (ListObjectsV2).
    let key: String?
    let query: [Field]
    /// A presigned URL's lifetime in seconds.
    let expires: Int?
    /// A header-signed request's own fields, its payload hash and the fields botocore added (by lower-case name).
    let headers: [Field]?
    let payload: String?
    let signedHeaders: [String: String]?
    /// The presigned URL, or the header-signed request's URL.
    let url: String
    let canonicalRequest: String
    let stringToSign: String

    var testDescription: String { name }

    var signer: SigV4Signer {
        get throws {
            let style = try #require(S3Location.AddressingStyle(rawValue: addressing))
            let location = try S3Location(
                endpoint: try #require(URL(string: endpoint)), region: region, bucket: bucket, addressingStyle: style)
            let credentials = S3Credentials(
                accessKeyID: accessKeyID, secretAccessKey: secretAccessKey, sessionToken: sessionToken)
            return SigV4Signer(location: location, credentials: credentials)
        }
    }

    var signingDate: Date { Date(timeIntervalSince1970: TimeInterval(seconds)) }

    var queryItems: [(name: String, value: String)] { query.map { ($0.name, $0.value) } }
}
