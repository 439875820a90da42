import HTTPTypes
import Hummingbird
import Logging

/// Gives every request an ID (``RequestIDs``). The ID goes into the request's logger metadata as `request_id`, so
/// every log line about the request carries it, and back to the client in the `X-Request-ID` response header.
struct RequestIDMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var context = context
        let id = RequestIDs.id(of: request.headers) { context.id }
        context.logger[metadataKey: "request_id"] = .string(id)
        var response = try await next(request, context)
        response.headers[RequestIDs.headerName] = id
        return response
    }
}

/// Request IDs: the client's `X-Request-ID` when it is a sane token (up to 64 letters, digits and `.`, `_`, `:`,
/// `-`), otherwise a generated one.
enum RequestIDs {
    /// The request and response header.
    static let headerName = HTTPField.Name("X-Request-ID")!
    /// The longest client-chosen ID kept.
    static let maximumLength = 64

    /// The ID of a request with these headers; `generated` makes one when the client sent none usable.
    static func id(of headers: HTTPFields, generated: () -> String) -> String {
        headers[headerName].flatMap(sanitized) ?? generated()
    }

    /// `value` when it is a usable request ID, else nil.
    static func sanitized(_ value: String) -> String? {
        guard (1...maximumLength).contains(value.utf8.count),
            value.utf8.allSatisfy({ byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"),
                    UInt8(ascii: "-"):
                    true
                default: false
                }
            })
        else { return nil }
        return value
    }
}
