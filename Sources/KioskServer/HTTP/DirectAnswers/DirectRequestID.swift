import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// The request ID of an answer the event loop gives: the client's `X-Request-ID` when it is sane
/// (``RequestIDs/sanitized(_:)``), otherwise a generated one of the same form as Hummingbird's for the routes'
/// answers (hex: a per-process random prefix, then a 16-digit counter from a random start). A generated ID is
/// written straight into the answer's head, without a `String` made for each answer (only a log line needs one).
enum DirectRequestID: CustomStringConvertible {
    case client(String)
    case generated(UInt64)

    /// The ID of `request`'s answer.
    init(of request: HTTPRequestHead) {
        if let id = request.headers.joinedValue(of: "X-Request-ID").flatMap(RequestIDs.sanitized) {
            self = .client(id)
        } else {
            self = .generated(
                Self.counter.withLockedValue { value in
                    defer { value &+= 1 }
                    return value
                })
        }
    }

    /// Writes the ID into `buffer`.
    func write(into buffer: inout ByteBuffer) {
        switch self {
        case .client(let id):
            buffer.writeString(id)
        case .generated(let number):
            buffer.writeString(Self.prefix)
            for shift in stride(from: 60, through: 0, by: -4) {
                buffer.writeInteger(Self.hexDigits[Int((number >> UInt64(shift)) & 0xF)])
            }
        }
    }

    var description: String {
        var buffer = ByteBuffer()
        write(into: &buffer)
        return String(buffer: buffer)
    }

    /// The per-process prefix, its own: the IDs never repeat one of Hummingbird's (whose prefix is another random
    /// number).
    private static let prefix = String(UInt64.random(in: .min ... .max), radix: 16)
    private static let counter = NIOLockedValueBox(UInt64.random(in: .min ... .max))
    private static let hexDigits = Array("0123456789abcdef".utf8)
}
