import Foundation
import HTTPTypes
import KioskCore
import Testing

@testable import KioskServer

/// The signer against botocore: the committed vectors, fresh ones for random keys, and AWS's own examples.
struct SigV4SignerTests {
    static let awsCredentials = S3Credentials(
        accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    /// 24 May 2013, 00:00:00 UTC: the time of AWS's examples.
    static let awsDate = Date(timeIntervalSince1970: 1_369_353_600)

    static func awsExampleSigner() throws -> SigV4Signer {
        let location = try S3Location(
            endpoint: try #require(URL(string: "https://s3.amazonaws.com")), region: "us-east-1",
            bucket: "examplebucket", addressingStyle: .virtualHosted)
        return SigV4Signer(location: location, credentials: awsCredentials)
    }

    @Test("AWS's example of a presigned URL (Authenticating Requests: Using Query Parameters)")
    func awsQueryExample() throws {
        let (url, signature) = try Self.awsExampleSigner().presign(
            method: .get, key: "test.txt", expires: .seconds(86400), at: Self.awsDate, query: [])
        #expect(
            signature.canonicalRequest == """
                GET
                /test.txt
                X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2F\
                aws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host
                host:examplebucket.s3.amazonaws.com

                host
                UNSIGNED-PAYLOAD
                """)
        #expect(
            signature.stringToSign == """
                AWS4-HMAC-SHA256
                20130524T000000Z
                20130524/us-east-1/s3/aws4_request
                3bfa292879f6447bbcda7001decf97f4a54dc650c8942174ae0a9121cf58ad04
                """)
        #expect(
            url.absoluteString == "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                + "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
                + "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
                + "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
    }

    @Test("AWS's example of a header-signed GET with a range (Signature Calculations: Authorization Header)")
    func awsHeaderExample() throws {
        let empty = try #require(SHA256Digest(hex: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
        let request = try Self.awsExampleSigner().signedRequest(
            method: .get, key: "test.txt", headerFields: [.range: "bytes=0-9"], payload: .sha256(empty),
            at: Self.awsDate)
        #expect(request.url.absoluteString == "https://examplebucket.s3.amazonaws.com/test.txt")
        #expect(
            request.headerFields[.authorization] == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/"
                + "us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        #expect(request.headerFields[.range] == "bytes=0-9")
    }

    @Test("Presigned URLs are botocore's, byte for byte", arguments: try SigV4Oracle.fixture().presigned)
    func presigned(_ vector: SigV4Vector) throws {
        try Self.checkPresigned(vector)
    }

    @Test("Header-signed requests are botocore's, byte for byte", arguments: try SigV4Oracle.fixture().headerSigned)
    func headerSigned(_ vector: SigV4Vector) throws {
        try Self.checkHeaderSigned(vector)
    }

    @Test("The fixture covers what the signer must get right")
    func fixtureCoverage() throws {
        let vectors = try SigV4Oracle.fixture()
        let all = vectors.presigned + vectors.headerSigned
        #expect(Set(all.map(\.addressing)) == ["path", "virtual"])
        #expect(Set(all.map(\.region)).isSuperset(of: ["us-east-1", "eu-central-1", "garage"]))
        #expect(all.contains { $0.sessionToken != nil } && all.contains { $0.sessionToken == nil })
        #expect(Set(vectors.headerSigned.map(\.method)) == ["GET", "HEAD", "PUT"])
        #expect(vectors.headerSigned.contains { $0.payload == "UNSIGNED-PAYLOAD" })
        #expect(vectors.headerSigned.contains { $0.key == nil })
        let keys = all.compactMap(\.key)
        for needle in [" ", "+", "%", "~", "=", "&", "?", "#", "é", "日本", "😀", "//"] {
            #expect(keys.contains { $0.contains(needle) }, "no key with '\(needle)'")
        }
        #expect(keys.contains { $0.hasPrefix("/") } && keys.contains { $0.hasSuffix("/") })
        #expect(keys.contains { $0.utf8.count == S3Location.maximumKeyLength })
    }

    @Test(
        "200 random keys, credentials, endpoints and dates signed as botocore signs them",
        .enabled(
            if: SigV4Oracle.isAvailable,
            "python3 cannot import botocore (pip install botocore): no live oracle"))
    func liveOracle() throws {
        let vectors = try SigV4Oracle.vectors(seed: 30, count: 200)
        #expect(vectors.presigned.count + vectors.headerSigned.count == 200)
        for vector in vectors.presigned { try Self.checkPresigned(vector) }
        for vector in vectors.headerSigned { try Self.checkHeaderSigned(vector) }
    }

    static func checkPresigned(_ vector: SigV4Vector) throws {
        let method = try #require(HTTPRequest.Method(vector.method))
        let (url, signature) = try vector.signer.presign(
            method: method, key: try #require(vector.key), expires: .seconds(try #require(vector.expires)),
            at: vector.signingDate, query: vector.queryItems)
        #expect(SigV4Signer.timestamp(vector.signingDate) == vector.date)
        #expect(signature.canonicalRequest == vector.canonicalRequest, "\(vector.name)")
        #expect(signature.stringToSign == vector.stringToSign, "\(vector.name)")
        #expect(url.absoluteString == vector.url, "\(vector.name)")
    }

    static func checkHeaderSigned(_ vector: SigV4Vector) throws {
        var fields = HTTPFields()
        for field in vector.headers ?? [] {
            fields.append(HTTPField(name: try #require(HTTPField.Name(field.name)), value: field.value))
        }
        let payload: SigV4Signer.Payload =
            vector.payload == "UNSIGNED-PAYLOAD"
            ? .unsigned : .sha256(try #require(SHA256Digest(hex: vector.payload ?? "")))
        let (request, signature) = try vector.signer.sign(
            method: try #require(HTTPRequest.Method(vector.method)), key: vector.key, query: vector.queryItems,
            headerFields: fields, payload: payload, at: vector.signingDate)
        #expect(signature.canonicalRequest == vector.canonicalRequest, "\(vector.name)")
        #expect(signature.stringToSign == vector.stringToSign, "\(vector.name)")
        #expect(request.url.absoluteString == vector.url, "\(vector.name)")
        let expected = try #require(vector.signedHeaders)
        for name in ["authorization", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token"] {
            let field = try #require(HTTPField.Name(name))
            #expect(request.headerFields[field] == expected[name], "\(vector.name): \(name)")
        }
        for field in vector.headers ?? [] {
            #expect(request.headerFields[try #require(HTTPField.Name(field.name))] != nil, "\(field.name) kept")
        }
    }

    @Test("Parts of a signature: the signing key, the time, the canonical header lines")
    func parts() {
        // The inputs of AWS's "derive a signing key" example, with service s3 (the chain done by Python's hmac).
        let key = SigV4Signer.signingKey(
            secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", day: "20120215", region: "us-east-1")
        #expect(
            key.withUnsafeBytes { $0.hexString } == "f22dfcb5da3bb8d6c924d26e9bb28e9f96ba691a1b1791d907c06f10ede94251")
        #expect(SigV4Signer.timestamp(Date(timeIntervalSince1970: 1_369_353_599.999)) == "20130523T235959Z")
        #expect(SigV4Signer.timestamp(Date(timeIntervalSince1970: 951_782_400)) == "20000229T000000Z")
        var fields = HTTPFields()
        fields.append(HTTPField(name: .contentType, value: "  text/plain;   charset=utf-8 "))
        fields.append(HTTPField(name: .accept, value: "a"))
        fields.append(HTTPField(name: .accept, value: "b\t c"))
        let lines = SigV4Signer.canonicalHeaders(fields, host: "h:9000")
        #expect(lines.map(\.name) == ["accept", "content-type", "host"])
        #expect(lines.map(\.value) == ["a,b c", "text/plain; charset=utf-8", "h:9000"])
    }

    @Test("Fields the signer sets replace the caller's; no token field without a token")
    func fieldsReplaced() throws {
        let fields: HTTPFields = [
            .authorization: "Bearer x", HTTPField.Name("X-Amz-Date")!: "1999",
            HTTPField.Name("x-amz-security-token")!: "old",
        ]
        let request = try Self.awsExampleSigner().signedRequest(
            method: .head, key: "a", headerFields: fields, payload: .unsigned, at: Self.awsDate)
        #expect(request.headerFields[values: .authorization].count == 1)
        #expect(request.headerFields[.authorization]?.hasPrefix("AWS4-HMAC-SHA256 Credential=") == true)
        #expect(request.headerFields[values: HTTPField.Name("x-amz-date")!] == ["20130524T000000Z"])
        #expect(request.headerFields[HTTPField.Name("x-amz-security-token")!] == nil)
        #expect(request.headerFields[HTTPField.Name("x-amz-content-sha256")!] == "UNSIGNED-PAYLOAD")
    }

    @Test("A presigned URL lives 1 s to 7 days, in whole seconds")
    func expiries() throws {
        let signer = try Self.awsExampleSigner()
        for good in [Duration.seconds(1), SigV4Signer.longestExpiry] {
            #expect(throws: Never.self) { try signer.presignedURL(key: "k", expires: good, at: Self.awsDate) }
        }
        for bad in [Duration.zero, .seconds(-1), .seconds(604_801), .milliseconds(1500)] {
            #expect(throws: S3SigningError.expiryOutOfRange(bad)) {
                try signer.presignedURL(key: "k", expires: bad, at: Self.awsDate)
            }
        }
    }
}
