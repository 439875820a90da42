import Foundation
import HTTPTypes
import Hummingbird
import KioskCore

extension RequestPreconditions {
    /// RFC 9110 §13.2.2 for a content answer, before `Range` and `If-Range`: `nil` to go on, the 304 to send (with
    /// `headers`, what a 200 would carry), or the 412 error thrown.
    static func answer(
        to request: Request, representation: RepresentationMetadata, headers: HTTPFields, now: Date
    ) throws -> Response? {
        let preconditions = RequestPreconditions(
            ifMatch: request.headers[.ifMatch], ifNoneMatch: request.headers[.ifNoneMatch],
            ifModifiedSince: request.headers[.ifModifiedSince], ifUnmodifiedSince: request.headers[.ifUnmodifiedSince])
        switch preconditions.evaluate(for: representation, now: now) {
        case .proceed:
            return nil
        case .notModified:
            // What a 200 would carry, without a body (RFC 9110 §15.4.5).
            return Response(status: .notModified, headers: headers)
        case .preconditionFailed(let field):
            throw APIError(
                .preconditionFailed,
                "The \(field.rawValue) precondition does not hold for the current representation (ETag "
                    + "\(representation.entityTag.headerValue), last modified "
                    + "\(HTTPDate.format(representation.lastModified))).")
        }
    }
}
