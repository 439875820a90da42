import Foundation
import KioskCore
import Testing

@testable import KioskKit

/// #30: the only URLs a grant may give on another origin than the server's are a file's presigned URL
/// (``GrantFile/presignedURL``): absolute, `https://` (or `http://` to a loopback host), with a query and nothing
/// that could carry other credentials. A request for one carries no token and no validator of Kiosk's.
@Suite("Presigned URLs in grants")
struct PresignedURLValidationTests {
    typealias V = GrantValidationTests
    static let signed = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=300&X-Amz-Signature=abc123"

    static let api = APIClient(
        serverURL: URL(string: "https://kiosk.example.com")!, idleTimeout: 60,
        limits: .init(maximumResponseSize: 1 << 20, deadline: 60, grant: GrantLimits()))

    static func grant(presigned: String?) -> Grant {
        var file = V.file()
        file.presignedURL = presigned
        return V.grant([file])
    }

    @Test(arguments: [
        "https://bucket.s3.eu-central-1.amazonaws.com/kiosk/com.example.a/1.0/Contents/a.bin?\(signed)",
        "https://s3.example.com:8443/bucket/a%20b/%C3%A9.bin?\(signed)",
        "http://127.0.0.1:9000/bucket/key?\(signed)", "http://localhost:9000/bucket/key?\(signed)",
        "http://[::1]:9000/bucket/key?\(signed)",
    ])
    func storeURLsAreAccepted(url: String) throws {
        let grant = Self.grant(presigned: url)
        #expect(V.problem(grant) == nil)
        let source = try ContentSource.of(
            grant.files[0], in: grant, api: Self.api)
        #expect(source.url.absoluteString == url)
        #expect(source.isPresigned && source.token == nil)
    }

    @Test(arguments: [
        "http://s3.example.com/bucket/key?\(signed)",  // plain http to a remote host
        "https://s3.example.com/bucket/key",  // no query: nothing signs it
        "https://s3.example.com/bucket/key?",  // an empty one
        "https://user:secret@s3.example.com/bucket/key?\(signed)",  // credentials of another kind
        "https://s3.example.com/bucket/key?\(signed)#fragment",
        "ftp://s3.example.com/bucket/key?\(signed)", "file:///etc/passwd?\(signed)", "/v1/content/x?\(signed)",
        "https:///bucket/key?\(signed)", "not a url?\(signed)",
        "https://s3.example.com/" + String(repeating: "k", count: 8192) + "?\(signed)",
    ])
    func otherURLsAreRefusedWithoutShowingTheirQuery(url: String) {
        guard case .presignedURL(let path, let shown)? = V.problem(Self.grant(presigned: url)) else {
            Issue.record("accepted or refused for another reason: \(url)")
            return
        }
        #expect(path == "Contents/a.bin")
        #expect(!shown.contains("Signature") && !shown.contains("secret"), "the error shows '\(shown)'")
    }

    @Test func withoutAPresignedURLTheFileComesFromTheServerWithTheToken() throws {
        let grant = Self.grant(presigned: nil)
        let source = try ContentSource.of(
            grant.files[0], in: grant, api: Self.api)
        #expect(source.url.absoluteString == "https://kiosk.example.com/v1/content/com.example.a/1.0/Contents/a.bin")
        #expect(source.token == "t" && !source.isPresigned)
    }

    @Test func aPresignedRequestDropsTheValidator() {
        let part = URL(fileURLWithPath: "/tmp/a.part")
        let store = ContentSource(url: URL(string: "https://s3.example.com/b/k?\(Self.signed)")!, token: nil)
        let kiosk = ContentSource(url: URL(string: "https://kiosk.example.com/v1/content/a")!, token: "t")
        let tag = "\"sha256:abc\""
        #expect(
            FetchRequest(source: store, offset: 5, expectedLength: 10, entityTag: tag, partURL: part).entityTag == nil)
        #expect(
            FetchRequest(source: kiosk, offset: 5, expectedLength: 10, entityTag: tag, partURL: part).entityTag == tag)
    }

    @Test func theWireNameIsPresignedURL() throws {
        var file = V.file()
        file.presignedURL = "https://s3.example.com/b/k?\(Self.signed)"
        let json = String(decoding: try KioskJSON.encode(file), as: UTF8.self)
        #expect(json.contains(#""presigned_url":"https://s3.example.com/b/k?X-Amz-"#))
        #expect(try KioskJSON.decode(GrantFile.self, from: Data(json.utf8)) == file)
        let old = #"{"length":10,"path":"a","sha256":"\#(V.hash)","url":"/v1/content/x/1/a"}"#
        #expect(try KioskJSON.decode(GrantFile.self, from: Data(old.utf8)).presignedURL == nil)
    }
}
