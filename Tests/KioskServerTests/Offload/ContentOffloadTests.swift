import Testing

@testable import KioskServer

@Suite("Offload: --offload nginx:PREFIX and the range requests nginx reads as Kiosk does")
struct ContentOffloadTests {
    @Test(arguments: ["nginx:/_kiosk/files", "nginx:/internal/kiosk-content", "nginx:/x~y.z_1"])
    func aPrefixIsAccepted(text: String) throws {
        let offload = try #require(ContentOffload(parsing: text))
        #expect(offload.description == text)
    }

    @Test(arguments: [
        "", "nginx:", "nginx:/", "nginx:files", "nginx:/files/", "nginx://files", "nginx:/a//b", "nginx:/a/../b",
        "nginx:/a b", "nginx:/a?b", "nginx:/a%20b", "nginx:/v1", "nginx:/v1/content", "nginx:/sandbox/x",
        "apache:/files", "NGINX:/files",
    ])
    func aPrefixIsRefused(text: String) {
        #expect(ContentOffload(parsing: text) == nil)
    }

    @Test(arguments: [
        ("s3:kiosk-content", "kiosk-content", ""), ("s3:kiosk.content/books", "kiosk.content", "books"),
        ("s3:my_bucket/content/2026/", "my_bucket", "content/2026"), ("s3:b/a b/é", "b", "a b/é"),
    ])
    func aBucketAndPrefixAreAccepted(text: String, bucket: String, prefix: String) throws {
        let offload = try #require(ContentOffload(parsing: text))
        #expect(offload == .s3(bucket: bucket, prefix: prefix))
        #expect(ContentOffload(parsing: offload.description) == offload)
    }

    @Test(arguments: [
        "s3:", "s3:/prefix", "s3:bucket//x", "s3:bu cket", "s3:bucket?x", "s3:bücket", "S3:bucket",
        "s3:bucket/\u{1}", "s3:" + String(repeating: "b", count: 256),
    ])
    func aBadBucketOrPrefixIsRefused(text: String) {
        #expect(ContentOffload(parsing: text) == nil)
    }

    @Test(arguments: ["bytes=0-9", "bytes=0-", "bytes=-5", "bytes=100-9223372036854775807"])
    func plainSingleRanges(range: String) {
        #expect(NginxOffload.isPlainSingleRange(range))
    }

    @Test(
        arguments: [
            nil, "", "BYTES=0-9", "bytes=007-009", "bytes=0-9,", "  bytes=0-9", "bytes=0-9, 20-29",
            "bytes=0-99999999999999999999999999", "bytes=-0x5", "bytes=9-0", "items=0-9",
        ] as [String?])
    func otherRangesStayWithKiosk(range: String?) {
        #expect(!NginxOffload.isPlainSingleRange(range))
    }
}
