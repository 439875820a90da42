import Foundation
import KioskCore

/// What the answer to a ranged content request is, judged on its status and header fields alone, before any byte
/// of its body is used: one rule for every range KioskKit asks for (whole files, chunk runs, pack runs, subchunk
/// gaps). No I/O: ``TransferHandler`` acts on the verdict.
enum RangeAnswer: Sendable, Hashable {
    /// Content for the bytes asked, `first` through `last` (for a 200 to a request of a whole file from byte 0:
    /// the whole file).
    case content(last: Int64)
    /// An error answer: its body is read (up to a limit) for the JSON envelope, and never written.
    case errorBody(status: Int)
    /// The whole file (200) where part of it was asked: the file changed (`If-Range`), or the server ignores ranges.
    case fileChanged
    /// An answer that does not match the request.
    case invalid(KioskError)

    /// Judges the answer to `bytes=first-last` of `request`'s file. `field` reads a header field by name.
    ///
    /// An error body must never become content: a JSON answer for a file that is not JSON is refused here;
    /// `Content-Range` (exactly the range asked, of the file's length), `Content-Length` and the SHA-256 check
    /// catch the rest.
    static func judge(
        status: Int, field: (String) -> String?, first: Int64, last: Int64, of request: FetchRequest
    ) -> RangeAnswer {
        guard status == 200 || status == 206 else { return .errorBody(status: status) }
        let type = (field("Content-Type") ?? "").lowercased()
        if type.contains("json"), !request.partURL.deletingPathExtension().pathExtension.lowercased().contains("json") {
            return .invalid(.invalidResponse("a content request was answered with \(type) and status \(status)"))
        }
        var last = last
        if status == 200 {
            guard first == 0, request.rangeEnd == request.expectedLength else { return .fileChanged }
            // The whole file instead of the first segment (ranges ignored): take it.
            last = request.expectedLength - 1
        } else {
            let range = field("Content-Range") ?? ""
            guard case .satisfied(let satisfied, let complete)? = ContentRange(parsing: range),
                satisfied.first == first, satisfied.last == last, complete == request.expectedLength
            else {
                return .invalid(
                    .invalidResponse(
                        "Content-Range '\(range)' does not match bytes=\(first)-\(last) of \(request.expectedLength)"))
            }
        }
        if let length = field("Content-Length").flatMap(Int64.init), length != last - first + 1 {
            return .invalid(.invalidResponse("Content-Length \(length) does not match the requested range"))
        }
        return .content(last: last)
    }
}
