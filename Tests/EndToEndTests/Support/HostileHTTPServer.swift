import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A request as the hostile server read it.
struct HostileRequest: Sendable {
    var method: String
    /// The request target as sent (path and query).
    var target: String
    /// Header fields in order, names as sent.
    var headers: [(String, String)]
    var body: Data

    /// The target without its query.
    var path: String { String(target.split(separator: "?", maxSplits: 1).first ?? "") }
}

/// What the hostile server answers.
enum HostileAnswer: Sendable {
    /// A complete answer with `Content-Length`.
    case complete(status: Int, headers: [(String, String)], body: Data)
    /// `Content-Encoding: gzip` whose body inflates to `decodedBytes` zero bytes (about 1/1000 on the wire).
    case gzipBomb(decodedBytes: Int)
    /// A 200 chunked body of JSON whitespace that never ends (until the client hangs up, or 8 GiB).
    case endlessChunked
    /// A 200 that announces a large body and then sends one byte every `interval` (until the client hangs up, or
    /// 10 minutes).
    case drip(interval: Duration)
    /// An error answer (`status`, JSON) whose chunked body never ends (until the client hangs up, or 8 GiB).
    case endlessError(status: Int)
    /// An error answer (`status`, JSON) that announces a large body and then sends one byte every `interval`, until
    /// the client hangs up or `lasting` has passed (then the connection closes).
    case drippingError(status: Int, interval: Duration, lasting: Duration)

    /// A JSON answer.
    static func json(_ status: Int, _ text: String, headers: [(String, String)] = []) -> HostileAnswer {
        .complete(status: status, headers: [("Content-Type", "application/json")] + headers, body: Data(text.utf8))
    }
}

/// A small HTTP/1.1 server on an ephemeral loopback port that answers whatever its script says, byte for byte, for
/// playing a hostile or broken Kiosk server against KioskKit and `kiosk`: scripted grants, error envelopes with
/// escape sequences, gzip bombs, endless and dripping bodies. Every connection is answered once and closed. Blocking
/// socket calls run on threads of their own, never on the test's concurrency pool.
final class HostileHTTPServer: Sendable {
    typealias Script = @Sendable (HostileRequest) -> HostileAnswer

    /// The bound port.
    let port: Int
    /// `http://127.0.0.1:<port>`.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    private let listener: Int32
    private let script: Script
    private let log = RequestLog()

    /// Starts listening; `script` decides each answer (it runs on the connection's thread).
    init(script: @escaping Script) throws {
        let (fd, port) = try RawHTTP.listenOnLoopback()
        self.port = port
        listener = fd
        self.script = script
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Stops accepting connections (connections being answered end when their client hangs up).
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Every request answered so far, in order: `METHOD path`.
    var requests: [String] { log.entries }

    /// Bytes of endless and dripping bodies sent so far (what a client read, or the kernel took for it, before it
    /// hung up).
    var bodyBytesSent: Int { log.bodyBytes }

    private func acceptLoop() {
        RawHTTP.acceptConnections(on: listener) { connection in Thread { [self] in serve(connection) }.start() }
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let request = Self.readRequest(fd) else { return }
        log.append("\(request.method) \(request.path)")
        switch script(request) {
        case .complete(let status, let headers, let body):
            var head = "HTTP/1.1 \(status) Hostile\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            _ = RawHTTP.sendAll(fd, Data((head + "\r\n").utf8) + body)
        case .gzipBomb(let decodedBytes):
            let body = Self.gzipOfZeros(decodedBytes)
            let head =
                "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: application/json\r\n"
                + "Content-Encoding: gzip\r\nContent-Length: \(body.count)\r\n\r\n"
            _ = RawHTTP.sendAll(fd, Data(head.utf8) + body)
        case .endlessChunked:
            sendEndless(fd, status: 200)
        case .endlessError(let status):
            sendEndless(fd, status: status)
        case .drip(let interval):
            sendDrip(fd, status: 200, interval: interval, lasting: .seconds(600))
        case .drippingError(let status, let interval, let lasting):
            sendDrip(fd, status: status, interval: interval, lasting: lasting)
        }
    }

    /// A chunked JSON body of whitespace, 64 KiB a chunk, until the client hangs up or 8 GiB.
    private func sendEndless(_ fd: Int32, status: Int) {
        let head =
            "HTTP/1.1 \(status) Hostile\r\nConnection: close\r\nContent-Type: application/json\r\n"
            + "Transfer-Encoding: chunked\r\n\r\n"
        guard RawHTTP.sendAll(fd, Data(head.utf8)) else { return }
        let size = 64 << 10
        let chunk =
            Data(String(size, radix: 16).utf8) + Data("\r\n".utf8)
            + Data(repeating: UInt8(ascii: " "), count: size) + Data("\r\n".utf8)
        for _ in 0..<((8 << 30) / size) {
            guard RawHTTP.sendAll(fd, chunk) else { return }
            log.count(size)
        }
    }

    /// 100,000,000 bytes announced, then one byte every `interval` until the client hangs up or `lasting` passed.
    private func sendDrip(_ fd: Int32, status: Int, interval: Duration, lasting: Duration) {
        let head =
            "HTTP/1.1 \(status) Hostile\r\nConnection: close\r\nContent-Type: application/json\r\n"
            + "Content-Length: 100000000\r\n\r\n"
        guard RawHTTP.sendAll(fd, Data(head.utf8)) else { return }
        let deadline = ContinuousClock.now + lasting
        while ContinuousClock.now < deadline, RawHTTP.sendAll(fd, Data(" ".utf8)) {
            log.count(1)
            Thread.sleep(
                forTimeInterval: Double(interval.components.seconds)
                    + Double(interval.components.attoseconds) / 1e18)
        }
    }

    /// Reads one request head (at most 64 KiB) and its `Content-Length` body (at most 1 MiB).
    private static func readRequest(_ fd: Int32) -> HostileRequest? {
        var received = Data()
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        var headEnd: Range<Data.Index>?
        while headEnd == nil {
            guard received.count < 64 << 10 else { return nil }
            let count = read(fd, &chunk, chunk.count)
            guard count > 0 else { return nil }
            received.append(chunk, count: count)
            headEnd = received.firstRange(of: Data("\r\n\r\n".utf8))
        }
        guard let headEnd else { return nil }
        let lines = String(decoding: received[..<headEnd.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        let headers: [(String, String)] = lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let length = headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) } ?? 0
        guard length <= 1 << 20 else { return nil }
        var body = Data(received[headEnd.upperBound...])
        while body.count < length {
            let count = read(fd, &chunk, chunk.count)
            guard count > 0 else { return nil }
            body.append(chunk, count: count)
        }
        return HostileRequest(
            method: String(requestLine[0]), target: String(requestLine[1]), headers: headers,
            body: body)
    }

    /// A gzip member whose DEFLATE stream (one block, fixed Huffman codes) is a literal zero followed by
    /// back-references of 258 bytes at distance 1: 13 bits per 258 decoded bytes. The trailer's CRC-32 is left zero:
    /// a client that enforces a limit stops long before it, and one that does not has spent the memory by then.
    static func gzipOfZeros(_ decodedBytes: Int) -> Data {
        var writer = BitWriter()
        writer.bits(1, count: 1)  // BFINAL
        writer.bits(1, count: 2)  // BTYPE 01: fixed Huffman codes
        writer.code(0x30, length: 8)  // literal 0
        var left = decodedBytes - 1
        while left >= 258 {
            // Length symbol 285 (258 bytes, code 11000101) then distance symbol 0 (distance 1, code 00000).
            writer.code(0b1100_0101_00000, length: 13)
            left -= 258
        }
        for _ in 0..<max(0, left) { writer.code(0x30, length: 8) }
        writer.code(0, length: 7)  // end of block (256)
        var member = Data([0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03])
        member.append(writer.finish())
        member.append(contentsOf: [0, 0, 0, 0])  // CRC-32 (see above)
        let size = UInt32(truncatingIfNeeded: decodedBytes)
        member.append(contentsOf: (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) })
        return member
    }
}

/// DEFLATE's bit order: values least significant bit first, Huffman codes most significant bit first.
private struct BitWriter {
    private var output = [UInt8]()
    private var accumulator: UInt64 = 0
    private var count = 0

    mutating func bits(_ value: UInt32, count bitCount: Int) {
        accumulator |= UInt64(value) << UInt64(count)
        count += bitCount
        while count >= 8 {
            output.append(UInt8(truncatingIfNeeded: accumulator))
            accumulator >>= 8
            count -= 8
        }
    }

    mutating func code(_ code: UInt32, length: Int) {
        var reversed: UInt32 = 0
        for index in 0..<length where code & (1 << UInt32(index)) != 0 { reversed |= 1 << UInt32(length - 1 - index) }
        bits(reversed, count: length)
    }

    mutating func finish() -> Data {
        if count > 0 { output.append(UInt8(truncatingIfNeeded: accumulator)) }
        return Data(output)
    }
}

/// The hostile server's request log. `@unchecked Sendable`: every access holds `lock`.
private final class RequestLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    private var bytes = 0

    func append(_ entry: String) {
        lock.lock()
        items.append(entry)
        lock.unlock()
    }

    func count(_ sent: Int) {
        lock.lock()
        bytes += sent
        lock.unlock()
    }

    var bodyBytes: Int {
        lock.lock()
        defer { lock.unlock() }
        return bytes
    }

    var entries: [String] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}
