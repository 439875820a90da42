import HTTPTypes
import Hummingbird
import NIOCore

/// An answer made without the request pipeline's help: status, headers and body, sent either as a Hummingbird
/// `Response` (from a route) or as response parts written straight to the connection (``DirectAnswerHandler``).
struct ReadyAnswer: Sendable {
    /// The status.
    var status: HTTPResponse.Status
    /// The headers, without those added to every answer (`Content-Length` of a body, `X-Request-ID`, `Date`).
    var headers: HTTPFields
    /// The body; nil for a 304 and for HEAD (whose headers then carry the `Content-Length` GET would send).
    var body: ByteBuffer?

    /// The answer as a route returns it (Hummingbird adds `Content-Length`, the middleware `X-Request-ID`).
    var response: Response {
        Response(status: status, headers: headers, body: body.map { ResponseBody(byteBuffer: $0) } ?? ResponseBody())
    }
}
