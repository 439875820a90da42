import Foundation
import HTTPTypes
import Hummingbird
import KioskCore

/// Building JSON responses and reading JSON request bodies within size limits.
enum JSONIO {
    /// A JSON response with the wire encoding of `value`.
    static func response<T: Encodable>(
        _ value: T, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]
    ) throws -> Response {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        let data = try KioskJSON.encode(value)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The error envelope response for `error`: the one place where refusals become responses.
    static func errorResponse(_ error: some APIResponseError) -> Response {
        var headers = HTTPFields()
        for (name, value) in error.headers {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        var envelope = APIErrorEnvelope(code: error.errorCode, message: error.message)
        envelope.error.reason = error.errorReason
        let status = error.status
        // Encoding two strings cannot fail.
        return (try? response(envelope, status: status, headers: headers)) ?? Response(status: status)
    }

    /// Reads the whole request body, refusing with 413 more than `limit` bytes (checked against `Content-Length`
    /// first, so an announced oversize body is refused without reading it).
    static func readBody(_ request: Request, limit: Int) async throws -> ByteBuffer {
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > limit {
            throw tooLarge(limit)
        }
        var collected = ByteBuffer()
        for try await var chunk in request.body {
            guard collected.readableBytes + chunk.readableBytes <= limit else { throw tooLarge(limit) }
            collected.writeBuffer(&chunk)
        }
        return collected
    }

    /// Decodes a JSON request body of type `T`, with a clear `bad_request` on malformed JSON or a missing field.
    static func decodeBody<T: Decodable>(_ type: T.Type, from request: Request, limit: Int) async throws -> T {
        let body = try await readBody(request, limit: limit)
        guard body.readableBytes > 0 else {
            throw APIError.badRequest("The request body is empty; send a JSON object.")
        }
        do {
            return try KioskJSON.makeDecoder().decode(T.self, from: Data(buffer: body))
        } catch let error as WireFormatError {
            throw APIError.badRequest(error.message)
        } catch let DecodingError.keyNotFound(key, _) {
            throw APIError.badRequest("The field '\(key.stringValue)' is required.")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            let field = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw APIError.badRequest("The field '\(field)' has the wrong type.")
        } catch {
            throw APIError.badRequest("The request body is not valid JSON.")
        }
    }

    private static func tooLarge(_ limit: Int) -> APIError {
        APIError(.payloadTooLarge, "The request body is larger than the limit of \(limit) bytes.")
    }
}

extension Data {
    /// The readable bytes of a buffer.
    init(buffer: ByteBuffer) { self = buffer.getData(at: buffer.readerIndex, length: buffer.readableBytes) ?? Data() }
}
