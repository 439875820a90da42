import KioskCore
import NIOCore

/// What ``DirectAnswerHandler`` sends for one request: bytes made once (the catalog's answers, health), or the head
/// of a content answer and the range of the open file that follows it.
enum DirectAnswer {
    /// An answer made once, written whole.
    case ready(ReadyAnswer)
    /// A content file's answer, its body streamed from the file.
    case file(DirectFileAnswer)

    /// The status code, for the request metrics.
    var statusCode: Int {
        switch self {
        case .ready(let answer): answer.status.code
        case .file(let answer): answer.statusCode
        }
    }

    /// The status line and headers, without the two made per answer.
    var encodedHead: ByteBuffer {
        switch self {
        case .ready(let answer): answer.encodedHead
        case .file(let answer): answer.encodedHead
        }
    }

    /// The body when it is bytes made before (nil for a file's body, sent from the file, and for none).
    var bufferedBody: ByteBuffer? {
        if case .ready(let answer) = self { return answer.body }
        return nil
    }

    /// Whether the answer outlives the write of its head: a body sent piece by piece, during which the connection's
    /// next requests wait.
    var streams: Bool {
        if case .file(let answer) = self { return answer.body != nil }
        return false
    }
}

/// A content answer sent from the event loop: the status line and headers (without the two made per answer) and
/// the range of the file its body is, sent with `sendfile(2)`.
struct DirectFileAnswer {
    let statusCode: Int
    /// The status line and the headers, `Content-Length` included.
    let encodedHead: ByteBuffer
    /// The open file the answer is about.
    let file: OpenContentFile
    /// The bytes of the file the body is; nil without a body (`HEAD`, a 304, an empty file).
    let body: ByteRange?
    /// The request's path and `Range`, for the content request's log line.
    let path: String
    let range: String?
}
