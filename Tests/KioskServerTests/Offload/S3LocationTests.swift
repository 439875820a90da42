import Foundation
import Testing

@testable import KioskServer

struct S3LocationTests {
    static func location(
        _ endpoint: String, bucket: String = "kiosk", region: String = "us-east-1",
        style: S3Location.AddressingStyle = .path
    ) throws -> S3Location {
        try S3Location(
            endpoint: try #require(URL(string: endpoint)), region: region, bucket: bucket, addressingStyle: style)
    }

    @Test("SigV4's encoding keeps only the unreserved characters, and `/` in a path")
    func encoding() {
        #expect("AZaz09-._~".sigV4Encoded() == "AZaz09-._~")
        #expect("a/b c+d%e=f&g?h#i".sigV4Encoded() == "a%2Fb%20c%2Bd%25e%3Df%26g%3Fh%23i")
        #expect("a/b c".sigV4Encoded(keepingSlash: true) == "a/b%20c")
        #expect("é日😀\u{0301}".sigV4Encoded() == "%C3%A9%E6%97%A5%F0%9F%98%80%CC%81")
    }

    @Test("Keys become paths once encoded; the signed host drops the default port and keeps another")
    func targets() throws {
        let local = try Self.location("http://127.0.0.1:9000").target(key: "/a b//c/")
        #expect(local.origin == "http://127.0.0.1:9000" && local.host == "127.0.0.1:9000")
        #expect(local.path == "/kiosk//a%20b//c/")
        let aws = try Self.location("https://S3.Example.com:443", bucket: "kiosk-content", style: .virtualHosted)
        let object = try aws.target(key: "k")
        #expect(object.origin == "https://kiosk-content.S3.Example.com:443")
        #expect(object.host == "kiosk-content.s3.example.com")
        #expect(try aws.target(key: nil).path == "/")
        #expect(try Self.location("https://h.example").target(key: nil).path == "/kiosk")
    }

    @Test("An endpoint's path prefixes every object's, read as the URL means it (botocore encodes its '%' again)")
    func pathPrefix() throws {
        let location = try Self.location("https://h.example/p%20x/s3/")
        #expect(try location.target(key: "k").path == "/p%20x/s3/kiosk/k")
        let virtual = try Self.location("https://h.example/p%20x/", bucket: "kiosk", style: .virtualHosted)
        #expect(try virtual.target(key: nil).path == "/p%20x")
    }

    @Test("Keys are 1 to 1024 UTF-8 bytes")
    func keys() throws {
        let location = try Self.location("http://127.0.0.1:9000")
        #expect(throws: S3SigningError.emptyKey) { try location.target(key: "") }
        #expect(throws: Never.self) { try location.target(key: String(repeating: "é", count: 512)) }
        #expect(throws: S3SigningError.keyTooLong(utf8Count: 1026)) {
            try location.target(key: String(repeating: "é", count: 513))
        }
    }

    @Test(
        "Refused buckets",
        arguments: [
            ("", S3Location.AddressingStyle.path), ("a/b", .path), ("a b", .path), ("é", .path),
            (String(repeating: "a", count: 256), .path), ("ab", .virtualHosted), ("Kiosk", .virtualHosted),
            ("-kiosk", .virtualHosted), ("kiosk_1", .virtualHosted), ("my.bucket", .virtualHosted),
            (String(repeating: "a", count: 64), .virtualHosted),
        ])
    func refusedBuckets(bucket: String, style: S3Location.AddressingStyle) {
        #expect(throws: S3SigningError.invalidBucket(bucket)) {
            try Self.location("https://s3.example.com", bucket: bucket, style: style)
        }
    }

    @Test("Accepted buckets: legacy names path-style, dotted names virtual-hosted over plain http")
    func acceptedBuckets() throws {
        #expect(throws: Never.self) { try Self.location("https://s3.example.com", bucket: "Legacy_Name.1") }
        #expect(throws: Never.self) {
            try Self.location("http://s3.example.com", bucket: "my.bucket", style: .virtualHosted)
        }
    }

    @Test("Refused regions", arguments: ["", "us east", "eu/1", "é", "a\n"])
    func refusedRegions(region: String) {
        #expect(throws: S3SigningError.invalidRegion(region)) {
            try Self.location("https://s3.example.com", region: region)
        }
    }

    @Test(
        "Refused endpoints, without repeating a password",
        arguments: ["ftp://h.example", "https://user:hunter2@h.example", "https://h.example/?a=b", "https://h#x", "/p"])
    func refusedEndpoints(endpoint: String) {
        let error = #expect(throws: S3SigningError.invalidEndpoint) { try Self.location(endpoint) }
        #expect(error.map { "\($0)".contains("hunter2") } == false)
    }
}
