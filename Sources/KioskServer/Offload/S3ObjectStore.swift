import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import KioskCore
import NIOCore
import NIOHTTP1

/// The S3 calls `kiosk content push` makes (`HEAD` and `PUT` of an object, and the multipart upload of a large
/// one), over AsyncHTTPClient, each signed by a ``SigV4Signer`` with the body's SHA-256, which the store checks
/// against the bytes it receives. An object pushed carries its SHA-256 as `x-amz-meta-sha256`, so that a push finds
/// what is already there; S3's own `ETag` is not the SHA-256.
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
        _ = try await call(
            .PUT, key: key, query: [], fields: fields,
            body: (.stream(try FileChunks(path: path), length: .known(length)), .sha256(digest)), changedFile: path)
    }

    /// The most parts one multipart upload may have.
    public static let maximumPartCount: Int64 = 10_000
    /// The smallest part S3 accepts (but for the last): 5 MiB.
    public static let smallestPart: Int64 = 5 << 20

    /// Uploads the file at `path` (`length` bytes whose SHA-256 is `digest`) as the object `key`, of `contentType`,
    /// in parts of `partSize` bytes (the last one shorter): each part is hashed as it is read, then sent signed with
    /// its SHA-256, which the store checks; the parts together must hash to `digest`, or the upload is abandoned
    /// (``S3StoreError/fileChanged``). A failed upload is aborted, so that the store drops its parts.
    public func putInParts(
        key: String, file path: String, length: Int64, digest: SHA256Digest, contentType: String, partSize: Int64
    ) async throws {
        precondition(partSize >= Self.smallestPart, "S3 refuses parts under 5 MiB")
        let partCount = max(1, (length + partSize - 1) / partSize)
        guard partCount <= Self.maximumPartCount else {
            throw S3StoreError.tooManyParts(key: key, length: length, partSize: partSize)
        }
        var fields = HTTPFields()
        fields[.contentType] = contentType
        fields[HTTPField.Name(Self.sha256Field)!] = digest.hexString
        let created = try await call(
            .POST, key: key, query: [("uploads", "")], fields: fields, body: nil)
        guard let uploadID = Self.element("UploadId", in: created.body) else {
            throw S3StoreError.unreadableAnswer(key: key, call: "CreateMultipartUpload")
        }
        do {
            var whole = SHA256()
            var parts: [(number: Int, entityTag: String)] = []
            for index in 0..<partCount {
                let offset = index * partSize
                let size = min(partSize, length - offset)
                let partDigest = try Self.hash(path, offset: offset, length: size, into: &whole)
                var partFields = HTTPFields()
                partFields[.contentLength] = String(size)
                let number = Int(index) + 1
                let answer = try await call(
                    .PUT, key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)],
                    fields: partFields,
                    body: (
                        .stream(try FileChunks(path: path, offset: offset, length: size), length: .known(size)),
                        .sha256(partDigest)
                    ), changedFile: path)
                guard let entityTag = answer.entityTag else {
                    throw S3StoreError.unreadableAnswer(key: key, call: "UploadPart")
                }
                parts.append((number, entityTag))
            }
            guard SHA256Digest(whole.finalize()) == digest else { throw S3StoreError.fileChanged(path: path) }
            let manifest =
                "<CompleteMultipartUpload>"
                + parts.map {
                    "<Part><PartNumber>\($0.number)</PartNumber><ETag>\(Self.xmlEscaped($0.entityTag))</ETag></Part>"
                }
                .joined() + "</CompleteMultipartUpload>"
            let bytes = ByteBuffer(string: manifest)
            var completeFields = HTTPFields()
            completeFields[.contentType] = "application/xml"
            completeFields[.contentLength] = String(bytes.readableBytes)
            let completed = try await call(
                .POST, key: key, query: [("uploadId", uploadID)], fields: completeFields,
                body: (.bytes(bytes), .sha256(SHA256Digest(SHA256.hash(data: Array(manifest.utf8))))))
            // S3 may answer 200 with an error in the body when the completion failed late.
            if let code = Self.errorCode(in: completed.body) {
                throw S3StoreError.refused(status: 200, key: key, code: code)
            }
        } catch {
            _ = try? await call(
                .DELETE, key: key, query: [("uploadId", uploadID)], fields: [:], body: nil)
            throw error
        }
    }

    /// The SHA-256 of `length` bytes of the file at `path` from `offset`, also fed to `whole`.
    private static func hash(_ path: String, offset: Int64, length: Int64, into whole: inout SHA256) throws
        -> SHA256Digest
    {
        var part = SHA256()
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        var left = length
        while left > 0 {
            guard let data = try handle.read(upToCount: Int(min(left, 1 << 20))), !data.isEmpty else {
                throw S3StoreError.fileChanged(path: path)
            }
            part.update(data: data)
            whole.update(data: data)
            left -= Int64(data.count)
        }
        return SHA256Digest(part.finalize())
    }

    /// One signed call: `method` on the object `key` with `query` and `fields`, and `body` with its payload hash (an
    /// empty body when nil). Throws ``S3StoreError/refused`` for any status but 2xx (``S3StoreError/fileChanged``
    /// for a body the store found different from its hash, when `changedFile` names the file it came from).
    private func call(
        _ method: HTTPMethod, key: String, query: [(name: String, value: String)], fields: HTTPFields,
        body: (HTTPClientRequest.Body, SigV4Signer.Payload)?, changedFile: String? = nil
    ) async throws -> (body: String, entityTag: String?) {
        let signed = try signer.signedRequest(
            method: HTTPRequest.Method(rawValue: method.rawValue)!, key: key, query: query, headerFields: fields,
            payload: body?.1 ?? .sha256(Self.emptySHA256), at: now())
        var request = Self.request(method, signed)
        if let body { request.body = body.0 }
        let response = try await client.execute(request, timeout: .hours(1))
        let text = String(buffer: try await response.body.collect(upTo: Self.maxErrorBody))
        guard (200..<300).contains(response.status.code) else {
            let code = Self.errorCode(in: text)
            if let changedFile, code == "XAmzContentSHA256Mismatch" || code == "BadDigest" {
                throw S3StoreError.fileChanged(path: changedFile)
            }
            throw S3StoreError.refused(status: Int(response.status.code), key: key, code: code)
        }
        return (text, response.headers.first(name: "etag"))
    }

    /// The text of the first `<name>` element of an XML answer.
    static func element(_ name: String, in body: String) -> String? {
        guard let start = body.range(of: "<\(name)>"),
            let end = body.range(of: "</\(name)>", range: start.upperBound..<body.endIndex)
        else { return nil }
        return String(body[start.upperBound..<end.lowerBound])
    }

    /// `text` with XML's five special characters escaped.
    static func xmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&apos;")
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
    static func errorCode(in body: String) -> String? { element("Code", in: body) }
}

/// A file's bytes (or `length` of them from `offset`) as a sequence of buffers of at most 1 MiB, read as they are
/// asked for (a `PUT` body of gigabytes never sits in memory).
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    /// The file, opened for reading.
    private let handle: FileHandle
    /// The bytes to read; nil: to the end of the file.
    private let length: Int64?

    /// Opens the file at `path`, to read `length` bytes (nil: all) from `offset`.
    init(path: String, offset: Int64 = 0, length: Int64? = nil) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        if offset > 0 { try handle.seek(toOffset: UInt64(offset)) }
        self.handle = handle
        self.length = length
    }

    /// Reads the next buffer.
    struct AsyncIterator: AsyncIteratorProtocol {
        let handle: FileHandle
        var left: Int64?

        mutating func next() async throws -> ByteBuffer? {
            let count = Int(Swift.min(left ?? Int64.max, 1 << 20))
            guard count > 0, let data = try handle.read(upToCount: count), !data.isEmpty else {
                try handle.close()
                return nil
            }
            if let remaining = left { left = remaining - Int64(data.count) }
            return ByteBuffer(bytes: data)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(handle: handle, left: length) }
}
