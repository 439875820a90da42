import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends one GET and hands back its head as soon as it arrives, then its body piece by piece: what a
/// ``URLDownload`` needs to judge an answer before it writes a byte of it. No redirect is followed (a 3xx is the
/// answer) and no content coding is undone.
protocol StreamingTransport: Sendable {
    /// Sends `GET url` with `headers`; returns when the answer's head has arrived. Throws
    /// ``KioskError/network(code:underlying:)`` when no head comes (no connection, reset, idle timeout).
    func get(_ url: URL, headers: [String: String]) async throws(KioskError) -> (AnswerHead, any AnswerBody)

    /// Ends every request and frees the transport's connections and threads.
    func shutdown() async
}

/// The head of an answer: its status and header fields, by lowercased name (a field sent more than once is joined
/// with `", "`).
struct AnswerHead: Sendable, Equatable {
    var status: Int
    var fields: [String: String]

    /// A head of `status` and the fields `fields` as they came, in order (names in any case, repeated or not).
    init(status: Int, fields: some Sequence<(String, String)>) {
        self.status = status
        self.fields = Dictionary(fields.map { ($0.lowercased(), $1) }) { "\($0), \($1)" }
    }

    /// A head of `status` and the fields `fields`.
    init(status: Int, fields: [String: String]) {
        self.init(status: status, fields: fields.map { ($0.key, $0.value) })
    }

    /// The field `name` (any case).
    subscript(_ name: String) -> String? { fields[name.lowercased()] }
}

/// The body of one answer, read by one task, piece by piece.
protocol AnswerBody: AnyObject {
    /// The next piece, or nil at the end of the body. Throws ``KioskError/network(code:underlying:)`` when the
    /// connection ends before the body does or idles out.
    func next() async throws(KioskError) -> Data?

    /// Stops the request: what is left of the body is never read, and its connection is closed.
    func cancel()
}

extension KioskError {
    /// The error a transport reports for `error`: cancellation stays cancellation (``cancelled(productID:)`` naming
    /// `url`), anything else is a network failure with the `URLError` code it stands for.
    static func transport(_ error: any Error, url: URL) -> KioskError {
        if let error = error as? KioskError { return error }
        if error is CancellationError { return .cancelled(productID: url.absoluteString) }
        let urlError = error as? URLError
        if urlError?.code == .cancelled { return .cancelled(productID: url.absoluteString) }
        return .network(
            code: urlError?.code.rawValue ?? URLError.networkConnectionLost.rawValue,
            underlying: urlError?.localizedDescription ?? "\(error)")
    }
}
