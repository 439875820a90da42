import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// The request ID of an answer the event loop gives: the client's `X-Request-ID` when it is sane
/// (``RequestIDs/sanitized(_:)``), otherwise a generated one of the same form as Hummingbird's for the routes'
/// answers (hex: a per-process random prefix, then 16 digits of a counter from a random start). A generated ID is
/// written straight into the answer's head, without a `String` made for each answer (only a log line needs one).
enum DirectRequestID: CustomStringConvertible {
    case client(String)
    case generated(UInt64)

    /// The ID of `request`'s answer; a generated one takes the next of the connection's `numbers`.
    init(of request: HTTPRequestHead, numbers: inout Numbers) {
        if let id = request.headers.joinedValue(of: "X-Request-ID").flatMap(RequestIDs.sanitized) {
            self = .client(id)
        } else {
            self = .generated(numbers.take())
        }
    }

    /// A connection's numbers for generated IDs: blocks of ``blockSize`` taken from the process's counter, one at a
    /// time, so that the event loops do not contend for the counter at every answer. The blocks never overlap, so
    /// neither do the IDs.
    struct Numbers {
        private var next: UInt64 = 0
        private var end: UInt64 = 0

        /// Numbers with no block taken yet.
        init() {}

        /// The next number, taking a new block when the last one is used up.
        mutating func take() -> UInt64 {
            if next == end {
                next = DirectRequestID.counter.withLockedValue { value in
                    defer { value &+= DirectRequestID.blockSize }
                    return value
                }
                end = next &+ DirectRequestID.blockSize
            }
            defer { next &+= 1 }
            return next
        }
    }

    /// How many numbers a connection takes at a time.
    static let blockSize: UInt64 = 1 << 16

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
