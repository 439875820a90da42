import AsyncHTTPClient
import Crypto
import Foundation
import KioskServerTestSupport
import Testing

@testable import KioskServer

/// `kiosk content push` against moto_server, an S3 emulator (`KIOSK_TEST_S3_ENDPOINT`, started by `.ci/moto.sh`):
/// each product version under its own keys, each object with its SHA-256, objects already there skipped, versions
/// never overwritten. moto checks no signature; `SigV4SignerTests` compare the signatures with botocore's.
@Suite("Content push to an S3-compatible store")
struct ContentPushTests {
    static let endpointVariable = "KIOSK_TEST_S3_ENDPOINT"
    static let endpoint = ProcessInfo.processInfo.environment[endpointVariable].flatMap(URL.init(string:))
    static let credentials = S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "moto-does-not-check-this")

    /// A store on a fresh bucket of the emulator.
    static func freshStore() async throws -> S3ObjectStore {
        let bucket = "kiosk-push-" + UUID().uuidString.lowercased().prefix(8)
        let endpoint = try #require(Self.endpoint)
        let signer = SigV4Signer(
            location: try S3Location(endpoint: endpoint, region: "us-east-1", bucket: bucket),
            credentials: credentials)
        let signed = try signer.signedRequest(
            method: .put, key: nil, payload: .sha256(S3ObjectStore.emptySHA256), at: Date())
        let response = try await HTTPClient.shared.execute(S3ObjectStore.request(.PUT, signed), timeout: .seconds(30))
        #expect(response.status.code == 200, "CreateBucket")
        return S3ObjectStore(signer: signer)
    }

    /// The bytes of the object at `key`, through a presigned GET (nil when the store refuses).
    static func object(_ key: String, in store: S3ObjectStore) async throws -> Data? {
        let url = try store.signer.presignedURL(key: key, expires: .seconds(60), at: Date())
        let response = try await HTTPClient.shared.execute(
            HTTPClientRequest(url: url.absoluteString), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 << 20)
        return response.status.code == 200 ? Data(buffer: body) : nil
    }

    /// The catalog of `content`.
    static func catalog(_ content: ServerTestDirectory) async -> CatalogSnapshot {
        await ContentCatalog(contentDirectory: content.url, dataDirectory: nil, logger: LogRecorder().logger).snapshot
    }

    @Test(.enabled(if: endpoint != nil, "KIOSK_TEST_S3_ENDPOINT not set: needs moto_server (.ci/moto.sh)"))
    func eachVersionIsPushedOnceUnderItsOwnKeys() async throws {
        let store = try await Self.freshStore()
        let push = ContentPush(store: store, prefix: "content/", concurrency: 3)
        let content = try ServerTestDirectory("push-content")
        let big = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let files = ["Contents/issue.pdf": big, "Contents/cover one.jpg": Data("cover".utf8)]
        try content.writeProduct(id: "com.example.issue", version: "1.0", files: files)

        let first = try await push.push(try #require(await Self.catalog(content).products["com.example.issue"]))
        #expect(first == ContentPush.Report(pushed: 2, pushedBytes: Int64(big.count + 5), skipped: 0, skippedBytes: 0))
        let key = ContentPush.key(prefix: "content", productID: "com.example.issue", version: "1.0", path: "")
        #expect(key == "content/com.example.issue/1.0/")
        #expect(try await Self.object(key + "Contents/issue.pdf", in: store) == big)
        #expect(try await Self.object(key + "Contents/cover one.jpg", in: store) == Data("cover".utf8))
        let sha = try #require(await Self.catalog(content).products["com.example.issue"]?.files.first?.sha256)
        #expect(try await store.pushedSHA256(of: key + "Contents/cover one.jpg") == sha)

        // Again: nothing to upload.
        let again = try await push.push(try #require(await Self.catalog(content).products["com.example.issue"]))
        #expect(again.pushed == 0 && again.skipped == 2)

        // Version 2.0 changes one file: its keys are new, and 1.0's objects stay as they were.
        try content.writeProduct(
            id: "com.example.issue", version: "2.0",
            files: ["Contents/issue.pdf": Data("new issue".utf8), "Contents/cover one.jpg": Data("cover".utf8)])
        let second = try await push.push(try #require(await Self.catalog(content).products["com.example.issue"]))
        #expect(second.pushed == 2)
        let newIssue = try await Self.object("content/com.example.issue/2.0/Contents/issue.pdf", in: store)
        #expect(newIssue == Data("new issue".utf8))
        #expect(try await Self.object(key + "Contents/issue.pdf", in: store) == big)
    }

    /// An object at a version's key with other bytes (written by hand, or by a push cut short) is uploaded again.
    @Test(.enabled(if: endpoint != nil, "KIOSK_TEST_S3_ENDPOINT not set: needs moto_server (.ci/moto.sh)"))
    func anObjectWithAnotherSHA256IsUploadedAgain() async throws {
        let store = try await Self.freshStore()
        let content = try ServerTestDirectory("push-content")
        try content.writeProduct(id: "com.example.book", files: ["Contents/book.epub": Data("the book".utf8)])
        let other = try content.write("other.bin", Data("not the book".utf8))
        let otherDigest = SHA256Digest(SHA256.hash(data: Data("not the book".utf8)))
        let key = "com.example.book/1.0/Contents/book.epub"
        try await store.put(
            key: key, file: other.path, length: 12, digest: otherDigest, contentType: "application/octet-stream")
        let report = try await ContentPush(store: store, prefix: "").push(
            try #require(await Self.catalog(content).products["com.example.book"]))
        #expect(report.pushed == 1 && report.skipped == 0)
        #expect(try await Self.object(key, in: store) == Data("the book".utf8))
    }

    /// A file over the part size goes in a multipart upload: 23 MiB in parts of 5 MiB (5 parts, the last 3 MiB), the
    /// object the file's exact bytes with its SHA-256 as metadata; pushed again, it is skipped; a file whose bytes no
    /// longer match the catalog's SHA-256 is refused, and its upload aborted (no object left behind).
    @Test(.enabled(if: endpoint != nil, "KIOSK_TEST_S3_ENDPOINT not set: needs moto_server (.ci/moto.sh)"))
    func aLargeFileGoesInPartsAndIsCheckedWhole() async throws {
        let store = try await Self.freshStore()
        let content = try ServerTestDirectory("push-parts")
        var generator = SystemRandomNumberGenerator()
        let big = Data((0..<(23 << 20) / 8).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } })
        try content.writeProduct(id: "com.example.level", files: ["Contents/level.pak": big])
        let push = ContentPush(store: store, prefix: "c", partSize: 5 << 20)
        let product = try #require(await Self.catalog(content).products["com.example.level"])
        let first = try await push.push(product)
        #expect(first == ContentPush.Report(pushed: 1, pushedBytes: Int64(big.count)))
        let key = ContentPush.key(
            prefix: "c", productID: "com.example.level", version: "1.0", path: "Contents/level.pak")
        #expect(try await Self.object(key, in: store) == big)
        #expect(try await store.pushedSHA256(of: key) == product.files[0].sha256)
        #expect(try await push.push(product).skipped == 1)

        // The file changes on disk after the catalog hashed it: the parts do not add up to its SHA-256.
        let changed = try content.write(
            "changed.bin", big.prefix(6 << 20) + Data([1]) + big.suffix(from: (6 << 20) + 1))
        let otherKey = "c/changed.bin"
        await #expect(throws: S3StoreError.fileChanged(path: changed.path)) {
            try await store.putInParts(
                key: otherKey, file: changed.path, length: Int64(big.count), digest: product.files[0].digest,
                contentType: "application/octet-stream", partSize: 5 << 20)
        }
        #expect(try await store.pushedSHA256(of: otherKey) == nil)
    }

    /// A bucket that does not exist: the store's refusal, with S3's code.
    @Test(.enabled(if: endpoint != nil, "KIOSK_TEST_S3_ENDPOINT not set: needs moto_server (.ci/moto.sh)"))
    func aMissingBucketIsAClearError() async throws {
        let signer = SigV4Signer(
            location: try S3Location(endpoint: try #require(Self.endpoint), region: "us-east-1", bucket: "no-such-one"),
            credentials: Self.credentials)
        let content = try ServerTestDirectory("push-content")
        try content.writeProduct(id: "com.example.book", files: ["Contents/book.epub": Data("the book".utf8)])
        await #expect(throws: S3StoreError.self) {
            _ = try await ContentPush(store: S3ObjectStore(signer: signer), prefix: "").push(
                try #require(await Self.catalog(content).products["com.example.book"]))
        }
    }
}
