import HTTPTypes
import Hummingbird
import NIOCore

/// An answer made once and sent many times: status, headers and body, either as a Hummingbird `Response` (from a
/// route) or as bytes written straight to the connection (``DirectAnswerHandler``), which are encoded with it.
/// A class: handing one to a connection costs a single reference count.
final class ReadyAnswer: Sendable {
    /// The status.
    let status: HTTPResponse.Status
    /// The headers, without those added to every answer (`Content-Length` of a body, `X-Request-ID`, `Date`).
    let headers: HTTPFields
    /// The body; nil for a 304 and for HEAD (whose headers then carry the `Content-Length` GET would send).
    let body: ByteBuffer?
    /// The status line and the headers as they go on the wire, with the body's `Content-Length`: what an answer
    /// sent from the event loop starts with (the headers added per answer and the blank line follow).
    let encodedHead: ByteBuffer

    init(status: HTTPResponse.Status, headers: HTTPFields, body: ByteBuffer?) {
        self.status = status
        self.headers = headers
        self.body = body
        var head = ByteBuffer()
        head.writeStatusLine(status)
        head.writeHeaderLines(headers)
        if let body { head.writeHeaderLine("Content-Length", String(body.readableBytes)) }
        self.encodedHead = head
    }

    /// The answer as a route returns it (Hummingbird adds `Content-Length`, the middleware `X-Request-ID`).
    var response: Response {
        Response(status: status, headers: headers, body: body.map { ResponseBody(byteBuffer: $0) } ?? ResponseBody())
    }
}

extension ByteBuffer {
    /// Writes an HTTP/1.1 status line, as NIO's response encoder does.
    mutating func writeStatusLine(_ status: HTTPResponse.Status) {
        writeStaticString("HTTP/1.1 ")
        writeString(String(status.code))
        writeStaticString(" ")
        writeString(status.reasonPhrase)
        writeStaticString("\r\n")
    }

    /// Writes one header line, `name: value`.
    mutating func writeHeaderLine(_ name: StaticString, _ value: String) {
        writeStaticString(name)
        writeStaticString(": ")
        writeString(value)
        writeStaticString("\r\n")
    }

    /// Writes `fields` as HTTP/1.1 header lines, in order.
    mutating func writeHeaderLines(_ fields: HTTPFields) {
        for field in fields { writeString("\(field.name.rawName): \(field.value)\r\n") }
    }
}
