import Foundation
import HTTPTypes
import HummingbirdCore
import KioskCore
import Logging
import NIOCore
import NIOHTTP1

/// The content requests the event loops answer themselves: a `GET` or `HEAD` of a file a live token opens, that the
/// open-file cache already holds, with no precondition that fails and at most one range, answered as the content
/// route answers it (``ContentRoutes``, ``RangeResponder``) and sent with `sendfile(2)`.
///
/// During a launch-day spike thousands of clients download the same few files: each such request then costs a
/// lookup, an `lstat` and the writes, with no task, no thread hop and no task frame held for as long as the body
/// takes to go out (the largest part of a busy connection's memory). Everything else is the route's, which answers
/// it as always: a refusal (with its JSON envelope and its metric), a path with a percent-encoded byte, a file not
/// open yet or changed on disk, a 412, a 416, several ranges; and every request when faults are injected or nginx sends the
/// files (the server then has no ``DirectContent``).
struct DirectContent: Sendable {
    let access: ContentAccess
    let evaluator: RangeRequestEvaluator
    /// The server's logger, for the content request lines at `debug`.
    let logger: Logger
    let now: @Sendable () -> Date

    /// The answer to a request for `path` (its target without the query), or nil when the route must answer it.
    func answer(to request: HTTPRequestHead, path: Substring, isHead: Bool) -> DirectFileAnswer? {
        let headers = request.headers
        // The token as the route reads it: `Authorization: Bearer`, or `?token=` (percent-decoded).
        let token =
            BearerToken.parse(authorization: headers.joinedValue(of: "Authorization"))
            ?? BearerToken.queryToken(in: request.uri)
        let rawPath = String(path)
        guard case .success(let claims) = access.admission(of: token),
            let contentPath = ContentRoutes.parse(rawPath: rawPath),
            let file = access.openedFile(at: contentPath, for: claims)
        else { return nil }
        let currentTime = now()
        let representation = file.representation
        let range = headers.joinedValue(of: "Range")
        let preconditions = RequestPreconditions(
            ifMatch: headers.joinedValue(of: "If-Match"), ifNoneMatch: headers.joinedValue(of: "If-None-Match"),
            ifModifiedSince: headers.joinedValue(of: "If-Modified-Since"),
            ifUnmodifiedSince: headers.joinedValue(of: "If-Unmodified-Since"))
        var head = ByteBufferAllocator().buffer(capacity: file.encodedHeaderLines.readableBytes + 192)
        let status: HTTPResponse.Status
        let body: ByteRange?
        switch preconditions.evaluate(for: representation, now: currentTime) {
        case .preconditionFailed:
            return nil
        case .notModified:
            // What a 200 would carry, without a body or its type (RFC 9110 §15.4.5).
            status = .notModified
            head.writeStatusLine(status)
            head.writeImmutableBuffer(file.encodedHeaderLines)
            body = nil
        case .proceed:
            let decision = evaluator.evaluate(
                method: isHead, range: range, ifRange: headers.joinedValue(of: "If-Range"),
                representation: representation, now: currentTime)
            let length = representation.length
            switch decision {
            case .full:
                status = .ok
                body = isHead || length == 0 ? nil : ByteRange(first: 0, last: length - 1)
                Self.writeHead(of: file, status: status, contentRange: nil, contentLength: length, into: &head)
            case .single(let single):
                status = .partialContent
                body = single
                Self.writeHead(
                    of: file, status: status,
                    contentRange: ContentRange.satisfied(single, completeLength: length).headerValue,
                    contentLength: single.length, into: &head)
            case .multiple, .unsatisfiable:
                return nil
            }
        }
        return DirectFileAnswer(
            statusCode: status.code, encodedHead: head, file: file, body: body, path: rawPath, range: range)
    }

    /// The content request's line at `debug`, as the route writes it (the path and range only: never the token).
    func log(_ answer: DirectFileAnswer, requestID: DirectRequestID) {
        guard logger.logLevel <= .debug else { return }
        var logger = logger
        logger[metadataKey: "request_id"] = .string(requestID.description)
        logger.debug("content request", metadata: ["path": "\(answer.path)", "range": "\(answer.range ?? "none")"])
    }

    private static func writeHead(
        of file: OpenContentFile, status: HTTPResponse.Status, contentRange: String?, contentLength: Int64,
        into head: inout ByteBuffer
    ) {
        head.writeStatusLine(status)
        head.writeImmutableBuffer(file.encodedHeaderLines)
        head.writeHeaderLine("Content-Type", file.contentType)
        if let contentRange { head.writeHeaderLine("Content-Range", contentRange) }
        head.writeHeaderLine("Content-Length", String(contentLength))
    }
}
