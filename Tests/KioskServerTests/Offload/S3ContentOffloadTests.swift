import Foundation
import KioskCore
import KioskServerTestSupport
import Testing

@testable import KioskServer

/// #30: the presigned URLs that grants carry with `--offload s3:…`: signed per window of half their lifetime, so that
/// the grants of one window share one encoded file list, each URL with at least half its lifetime left; the pack's
/// validators untouched by them; the settings that describe the store.
@Suite("Offload to an S3-compatible store")
struct S3ContentOffloadTests {
    static let credentials = S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG")

    static func offload(lifetime: Duration = .seconds(300), prefix: String = "content/") throws -> S3ContentOffload {
        let location = try S3Location(
            endpoint: URL(string: "https://s3.eu-central-1.amazonaws.com")!, region: "eu-central-1",
            bucket: "kiosk-content")
        return try S3ContentOffload(
            signer: SigV4Signer(location: location, credentials: credentials), prefix: prefix, urlLifetime: lifetime)
    }

    @Test func urlsAreSignedAtTheStartOfAWindowOfHalfTheirLifetime() throws {
        let offload = try Self.offload(lifetime: .seconds(300))
        let start = Date(timeIntervalSince1970: 1_800_000_000)  // a multiple of 150 s
        for offset in [0.0, 1, 74.5, 149.999] {
            #expect(offload.signingTime(for: start.addingTimeInterval(offset)) == start)
        }
        #expect(offload.signingTime(for: start.addingTimeInterval(150)) == start.addingTimeInterval(150))
        #expect(offload.expiry(ofURLsSignedAt: start) == start.addingTimeInterval(300))
        // Whatever the moment, a URL handed out has at least half its lifetime left.
        for offset in stride(from: 0.0, to: 600, by: 7.3) {
            let now = start.addingTimeInterval(offset)
            let left = offload.expiry(ofURLsSignedAt: offload.signingTime(for: now)).timeIntervalSince(now)
            #expect(left > 150 && left <= 300, "at +\(offset) s: \(left) s left")
        }
        // The shortest lifetime, 2 s: windows of 1 s.
        let short = try Self.offload(lifetime: .seconds(2))
        #expect(short.signingTime(for: start.addingTimeInterval(1.7)) == start.addingTimeInterval(1))
    }

    @Test(arguments: [Duration.seconds(1), .seconds(0), .milliseconds(2500), .seconds(604_801)])
    func lifetimesOutsideSigV4sAreRefused(lifetime: Duration) {
        #expect(throws: S3SigningError.self) { try Self.offload(lifetime: lifetime) }
    }

    @Test func aURLIsThePresignedGETOfThePushedObject() throws {
        let offload = try Self.offload()
        #expect(offload.prefix == "content")
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        let url = try offload.presignedURL(
            productID: "com.example.book", version: "2.0", path: "Contents/a b+c.pdf", signedAt: at)
        let key = ContentPush.key(
            prefix: "content", productID: "com.example.book", version: "2.0", path: "Contents/a b+c.pdf")
        #expect(url == (try offload.signer.presignedURL(key: key, expires: .seconds(300), at: at)).absoluteString)
        #expect(
            url.hasPrefix(
                "https://s3.eu-central-1.amazonaws.com/kiosk-content/content/com.example.book/2.0/Contents/a%20b%2Bc.pdf?"
            ))
        #expect(url.contains("X-Amz-Expires=300") && url.contains("X-Amz-Date=20270115T080000Z"))
    }

    @Test func aFileListWithURLsKeepsThePacksValidators() async throws {
        let content = try ServerTestDirectory("s3-list")
        try content.writeProduct(
            id: "com.example.pack", files: ["Contents/a.bin": Data("a".utf8), "Contents/b c.bin": Data("bc".utf8)])
        let catalog = await ContentCatalog(
            contentDirectory: content.url, dataDirectory: nil, logger: LogRecorder().logger)
        let product = try #require(catalog.snapshot.products["com.example.pack"])
        let offload = try Self.offload()
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        let plain = try GrantFileList(product: product)
        let signed = try GrantFileList(product: product, presignedBy: offload, at: at)
        #expect(signed.pack.entityTag == plain.pack.entityTag)
        let files = try KioskJSON.decode([GrantFile].self, from: Data(buffer: signed.json))
        #expect(
            files.map(\.presignedURL)
                == (try files.map {
                    try offload.presignedURL(
                        productID: "com.example.pack", version: product.info.contentVersion, path: $0.path, signedAt: at
                    )
                }))
        // The hand-written encoding is what KioskJSON gives.
        #expect(Data(buffer: signed.json) == (try KioskJSON.encode(files)))
        let unsigned = try KioskJSON.decode([GrantFile].self, from: Data(buffer: plain.json))
        #expect(unsigned.allSatisfy { $0.presignedURL == nil })
    }

    @Test func theSettingsDescribeTheStoreAndTheKeysComeFromTheEnvironmentOnly() throws {
        let environment = [
            "KIOSK_OFFLOAD": "s3:kiosk-content/books", "KIOSK_S3_ENDPOINT": "http://127.0.0.1:9000",
            "KIOSK_S3_REGION": "garage", "KIOSK_S3_ADDRESSING": "path", "KIOSK_OFFLOAD_URL_LIFETIME": "120",
            "AWS_ACCESS_KEY_ID": "GK123", "AWS_SECRET_ACCESS_KEY": "s3cr3t", "AWS_SESSION_TOKEN": "tok",
        ]
        let configuration = try ServerConfiguration(options: [:], environment: environment)
        let offload = try #require(try configuration.s3ContentOffload())
        #expect(offload.prefix == "books" && offload.urlLifetime == .seconds(120))
        #expect(offload.signer.location.bucket == "kiosk-content" && offload.signer.location.region == "garage")
        #expect(offload.signer.credentials.sessionToken == "tok")
        let url = try offload.presignedURL(productID: "p", version: "1", path: "a", signedAt: Date())
        #expect(url.hasPrefix("http://127.0.0.1:9000/kiosk-content/books/p/1/a?"))
        // Keys on the command line are not read.
        let options = try ServerConfiguration(
            options: ["offload": "s3:b", "s3-access-key-id": "GK", "s3-secret-access-key": "x"],
            environment: ["AWS_ACCESS_KEY_ID": "GK123", "AWS_SECRET_ACCESS_KEY": "s3cr3t"])
        #expect(try options.s3ContentOffload()?.signer.credentials.accessKeyID == "GK123")
        // AWS's endpoint by default, virtual-hosted on request.
        let aws = try ServerConfiguration(
            options: ["offload": "s3:kiosk-content", "s3-region": "eu-west-3", "s3-addressing": "virtual"],
            environment: ["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "s"])
        let awsURL = try #require(try aws.s3ContentOffload()).presignedURL(
            productID: "p", version: "1", path: "a", signedAt: Date())
        #expect(awsURL.hasPrefix("https://kiosk-content.s3.eu-west-3.amazonaws.com/p/1/a?"))
    }

    @Test func anOffloadWithoutKeysOrWithFaultsIsRefused() {
        #expect {
            try ServerConfiguration(options: ["offload": "s3:kiosk-content"], environment: [:])
        } throws: { error in
            "\(error)".contains("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        }
        #expect {
            try ServerConfiguration(
                options: ["offload": "s3:kiosk-content", "faults": "chaos"],
                environment: ["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "s"])
        } throws: { error in
            "\(error)".contains("--faults cannot be used with --offload")
        }
        #expect(throws: ServerConfigurationError.self) {
            try ServerConfiguration(
                options: ["offload": "s3:kiosk-content", "offload-url-lifetime": "1"],
                environment: ["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "s"])
        }
    }

    @Test func theStartLogNamesTheBucketAndNoKey() async throws {
        let (content, data) = (try ServerTestDirectory("s3-log-content"), try ServerTestDirectory("s3-log-data"))
        try content.writeProduct(id: "com.example.issue")
        var configuration = ServerConfiguration.forTests(content: content.url, data: data.url)
        configuration.offload = .s3(bucket: "kiosk-content", prefix: "books")
        configuration.s3Endpoint = URL(string: "http://127.0.0.1:9")
        configuration.s3AccessKeyID = "AKIDSTARTLOG"
        configuration.s3SecretAccessKey = "secret-never-logged"
        let log = LogRecorder()
        let server = try await LiveKioskServer.start(configuration: configuration, logger: log.logger)
        await server.stop()
        let text = log.entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
        #expect(text.contains("content offloaded to an object store") && text.contains("kiosk-content"))
        #expect(!text.contains("secret-never-logged"))
    }
}
