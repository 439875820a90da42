import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import KioskCore
import NIOCore
import NIOHTTP1

/// The S3 calls `kiosk content push` makes (`HEAD` and `PUT` of an object), over AsyncHTTPClient, each signed by a
/// ``SigV4Signer`` with the body's SHA-256, which the store checks against the bytes it receives. An object pushed
/// carries its SHA-256 as `x-amz-meta-sha256`, so that a push finds what is already there; S3's own `ETag` is not
/// the SHA-256.
public struct S3ObjectStore: Sendable {
    /// The metadata field that holds an object's SHA-256 (`x-amz-meta-sha256`).
    static let sha256Field = "x-amz-meta-sha256"
    /// The most an error answer's body is read.
    static let maxErrorBody = 64 * 1024

    /// Signs every request; names the store and bucket.
    public let signer: SigV4Signer
    /// The server's client that follows no redirect: a 3xx is the store's answer (``S3StoreError/refused``), and
    /// signed headers never go to another host.
    private let client = HTTPStoreTransport.noRedirectsClient
    private let now: @Sendable () -> Date

    /// A store reached with requests signed by `signer` at `now()`.
    public init(signer: SigV4Signer, now: @escaping @Sendable () -> Date = Date.init) {
        self.signer = signer
        self.now = now
    }

    /// The SHA-256 the object at `key` was pushed with (lowercase hex), `""` for an object pushed without one, nil
    /// when there is no such object.
    public func pushedSHA256(of key: String) async throws -> String? {
        let signed = try signer.signedRequest(method: .head, key: key, payload: .sha256(Self.emptySHA256), at: now())
        let response = try await client.execute(Self.request(.HEAD, signed), timeout: .seconds(60))
        switch response.status.code {
        case 200: return response.headers.first(name: Self.sha256Field)?.lowercased() ?? ""
        case 404: return nil
        default: throw S3StoreError.refused(status: Int(response.status.code), key: key, code: nil)
        }
    }

    /// Uploads the file at `path` (`length` bytes whose SHA-256 is `digest`) as the object `key`, of `contentType`.
    /// The store refuses bytes that do not hash to `digest` (a file changed meanwhile: ``S3StoreError/fileChanged``).
    public func put(
        key: String, file path: String, length: Int64, digest: SHA256Digest, contentType: String
    ) async throws {
        guard length <= S3StoreError.largestPut else { throw S3StoreError.tooLargeForOnePut(key: key, length: length) }
        var fields = HTTPFields()
        fields[.contentType] = contentType
        fields[.contentLength] = String(length)
        fields[HTTPField.Name(Self.sha256Field)!] = digest.hexString
        let signed = try signer.signedRequest(
            method: .put, key: key, headerFields: fields, payload: .sha256(digest), at: now())
        var request = Self.request(.PUT, signed)
        request.body = .stream(try FileChunks(path: path), length: .known(length))
        let response = try await client.execute(request, timeout: .hours(1))
        guard response.status.code == 200 else {
            let body = try await response.body.collect(upTo: Self.maxErrorBody)
            let code = Self.errorCode(in: String(buffer: body))
            if code == "XAmzContentSHA256Mismatch" || code == "BadDigest" { throw S3StoreError.fileChanged(path: path) }
            throw S3StoreError.refused(status: Int(response.status.code), key: key, code: code)
        }
        _ = try await response.body.collect(upTo: Self.maxErrorBody)
    }

    /// The SHA-256 of no bytes.
    static let emptySHA256 = SHA256Digest(SHA256.hash(data: Data()))

    /// An AsyncHTTPClient request for `signed`.
    static func request(_ method: HTTPMethod, _ signed: SigV4Signer.SignedRequest) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: signed.url.absoluteString)
        request.method = method
        for field in signed.headerFields where field.name != .contentLength {
            request.headers.add(name: field.name.rawName, value: field.value)
        }
        return request
    }

    /// The `<Code>` of an S3 error body, if it has one.
    static func errorCode(in body: String) -> String? {
        guard let start = body.range(of: "<Code>"),
            let end = body.range(of: "</Code>", range: start.upperBound..<body.endIndex)
        else { return nil }
        return String(body[start.upperBound..<end.lowerBound])
    }
}

/// A file's bytes as a sequence of buffers of at most 1 MiB, read as they are asked for (a `PUT` body of gigabytes
/// never sits in memory).
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    /// The file, opened for reading.
    private let handle: FileHandle

    /// Opens the file at `path`.
    init(path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        self.handle = handle
    }

    /// Reads the next buffer.
    struct AsyncIterator: AsyncIteratorProtocol {
        let handle: FileHandle

        mutating func next() async throws -> ByteBuffer? {
            guard let data = try handle.read(upToCount: 1 << 20), !data.isEmpty else {
                try handle.close()
                return nil
            }
            return ByteBuffer(bytes: data)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(handle: handle) }
}
