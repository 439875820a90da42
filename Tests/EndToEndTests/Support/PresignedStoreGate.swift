import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The front door of an object store for tests: relays each request to a store on loopback (moto_server, which
/// checks neither signatures nor lifetimes) after checking the lifetime of its presigned URL as S3 does. A request
/// whose `X-Amz-Date` plus `X-Amz-Expires` has passed by the gate's clock (the real one, moved ahead by ``skew``,
/// as a store whose clock runs ahead of Kiosk's) gets S3's `403 AccessDenied` "Request has expired", and so does one
/// with no presigned query at all. S3 checks at the start of a request only: a transfer that began in time ends.
///
/// It keeps the head of every request (to check what clients send the store), counts the refusals and the bytes it
/// relays to clients, and can pace those bytes (``bytesPerSecond``), so that a download outlives its URLs. One
/// request per connection: each is relayed with `Connection: close`.
final class PresignedStoreGate: Sendable {
    /// `http://127.0.0.1:<port>` of the gate: the `--s3-endpoint` to give Kiosk.
    let baseURL: URL
    private let listener: Int32
    private let upstreamPort: Int
    private let state = Mutex<(heads: [String], refused: Int, toClient: Int, bodies: Int)>(([], 0, 0, 0))
    /// How far ahead of the real clock the gate's clock is.
    private let skew: TimeInterval
    /// The most bytes a second relayed to one client; nil: as fast as it can.
    private let bytesPerSecond: Int?

    /// A gate in front of the store at `127.0.0.1:upstreamPort`, its clock `skew` seconds ahead, relaying at most
    /// `bytesPerSecond` to each client (nil: as fast as it can).
    init(to upstreamPort: Int, skew: TimeInterval = 0, bytesPerSecond: Int? = nil) throws {
        let (fd, port) = try RawHTTP.listenOnLoopback()
        listener = fd
        self.upstreamPort = upstreamPort
        self.skew = skew
        self.bytesPerSecond = bytesPerSecond
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
        Thread { [self] in acceptLoop() }.start()
    }

    /// The heads (request line and header lines) of the requests received so far, in order.
    var requestHeads: [String] { state.withLock { $0.heads } }
    /// Requests refused as expired (or unsigned) so far.
    var refused: Int { state.withLock { $0.refused } }
    /// Bytes relayed from the store to clients so far, heads included.
    var bytesToClient: Int { state.withLock { $0.toClient } }
    /// The bytes of response bodies relayed so far (heads not counted): the content clients received.
    var bodyBytesToClient: Int { state.withLock { $0.bodies } }

    /// Stops accepting; requests in progress finish.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        RawHTTP.acceptConnections(on: listener) { client in Thread { [self] in serve(client) }.start() }
    }

    /// Reads one request head from `client`, and refuses it or relays it and the answer.
    private func serve(_ client: Int32) {
        defer { close(client) }
        guard let head = Self.readHead(client) else { return }
        state.withLock { $0.heads.append(head) }
        let pace = bytesPerSecond
        guard Self.isAlive(head, at: Date().addingTimeInterval(skew)) else {
            state.withLock { $0.refused += 1 }
            let body =
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied</Code>"
                + "<Message>Request has expired</Message></Error>"
            let answer =
                "HTTP/1.1 403 Forbidden\r\nContent-Type: application/xml\r\nContent-Length: "
                + "\(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
            _ = RawHTTP.sendAll(client, Data(answer.utf8))
            return
        }
        let upstream = RawHTTP.makeTCPSocket()
        defer { if upstream >= 0 { close(upstream) } }
        guard upstream >= 0, RawHTTP.connectToLoopback(upstream, port: upstreamPort) else { return }
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false).filter {
            !$0.lowercased().hasPrefix("connection:")
        }
        guard RawHTTP.sendAll(upstream, Data((lines.joined(separator: "\r\n") + "\r\nConnection: close\r\n\r\n").utf8))
        else { return }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let started = Date()
        var relayed = 0
        var responseHead: [UInt8]? = []  // until its end is seen
        while true {
            let count = buffer.withUnsafeMutableBytes { read(upstream, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            guard buffer.withUnsafeBytes({ RawHTTP.sendAll(client, Data($0[0..<count])) }) else { return }
            var body = count
            if let seen = responseHead {
                let joined = seen + buffer[0..<count]
                if let end = joined.firstRange(of: [13, 10, 13, 10]) {
                    body = joined.count - end.upperBound
                    responseHead = nil
                } else {
                    body = 0
                    responseHead = joined
                }
            }
            state.withLock {
                $0.toClient += count
                $0.bodies += body
            }
            relayed += count
            if let pace {
                let due = started.addingTimeInterval(Double(relayed) / Double(pace))
                let wait = due.timeIntervalSinceNow
                if wait > 0 { usleep(useconds_t(wait * 1_000_000)) }
            }
        }
    }

    /// The request head (without its final empty line), or nil when the connection ends first or it is over 64 KiB.
    private static func readHead(_ socket: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count < 64 << 10 {
            guard read(socket, &byte, 1) == 1 else { return nil }
            bytes.append(byte)
            if bytes.count >= 4, bytes.suffix(4) == [13, 10, 13, 10] {
                return String(decoding: bytes.dropLast(4), as: UTF8.self)
            }
        }
        return nil
    }

    /// Whether the presigned query of the request line in `head` is still alive at `date`: its `X-Amz-Date` plus
    /// `X-Amz-Expires` seconds is later.
    static func isAlive(_ head: String, at date: Date) -> Bool {
        let target = head.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        let items = URLComponents(string: "http://store" + target)?.queryItems ?? []
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        guard let signed = value("X-Amz-Date").flatMap(formatter.date(from:)),
            let seconds = value("X-Amz-Expires").flatMap(Double.init), value("X-Amz-Signature") != nil
        else { return false }
        return signed.addingTimeInterval(seconds) > date
    }
}
