import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An HTTP/1.1 answer as it came off the wire.
struct RawHTTPResponse: Sendable {
    var status: Int
    /// Header fields in order, names as sent.
    var headers: [(String, String)]
    var body: Data

    /// The first value of a header field (case-insensitive).
    func header(_ name: String) -> String? {
        headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
    }

    /// The body as UTF-8 text.
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// A minimal HTTP/1.1 client over a plain socket, so tests control every byte sent (raw paths, odd headers) and
/// see every byte answered. Each request uses its own connection (`Connection: close`) and runs on its own thread,
/// so blocking socket calls never occupy the test's concurrency pool.
enum RawHTTP {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func send(
        port: Int, method: String, target: String, headers: [(String, String)] = [], body: Data? = nil,
        timeout: TimeInterval = 30
    ) async throws -> RawHTTPResponse {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body, !headers.contains(where: { $0.0.lowercased() == "content-length" }) {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        var request = Data(head.utf8)
        if let body { request.append(body) }
        let bytes = request
        let raw = try await onThread { try exchange(port: port, request: bytes, timeout: timeout) }
        return try parse(raw, isHead: method == "HEAD")
    }

    /// A new blocking TCP socket (negative on failure).
    static func makeTCPSocket() -> Int32 {
        #if canImport(Glibc)
            socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            socket(AF_INET, SOCK_STREAM, 0)
        #endif
    }

    /// A socket listening on an ephemeral port of 127.0.0.1, and the port.
    static func listenOnLoopback() throws -> (fd: Int32, port: Int) {
        let fd = makeTCPSocket()
        guard fd >= 0 else { throw Failure(description: "socket() failed") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw Failure(description: "bind/listen failed: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Accepts connections on `listener` until it is closed (or fails otherwise than by a signal), handing each to
    /// `handle` on the accepting thread: the loop of the tests' own servers and relays.
    static func acceptConnections(on listener: Int32, _ handle: (Int32) -> Void) {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR { continue }
                return
            }
            handle(connection)
        }
    }

    /// Connects `fd` to `127.0.0.1:port`; whether it worked.
    static func connectToLoopback(_ fd: Int32, port: Int) -> Bool {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        } == 0
    }

    /// Writes all of `data` to `fd`; false when the peer stopped taking it (closed, or the send timeout passed).
    static func sendAll(_ fd: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                #if canImport(Glibc)
                    let written = Glibc.send(
                        fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                #else
                    let written = Darwin.send(fd, buffer.baseAddress! + offset, buffer.count - offset, 0)
                #endif
                guard written > 0 else { return false }
                offset += written
            }
            return true
        }
    }

    /// Runs blocking work on a new thread and awaits its result.
    static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try work() }) }
            thread.start()
        }
    }

    private static func exchange(port: Int, request: Data, timeout: TimeInterval) throws -> Data {
        let fd = makeTCPSocket()
        guard fd >= 0 else { throw Failure(description: "socket() failed") }
        defer { close(fd) }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        // A server may answer (413) and stop reading before a large body is sent: give up writing after 2 s and read
        // the answer it already sent.
        var sendTimeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
        guard connectToLoopback(fd, port: port) else { throw Failure(description: "connect() failed") }
        // A short write means the server stopped reading; its answer may already be there.
        _ = sendAll(fd, request)
        var received = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count == 0 { break }
            guard count > 0 else {
                if errno == EINTR { continue }
                // ECONNRESET after a complete answer (the server closed first) still leaves a usable answer.
                if !received.isEmpty { break }
                throw Failure(description: "read() failed: errno \(errno)")
            }
            received.append(chunk, count: count)
        }
        return received
    }

    private static func parse(_ raw: Data, isHead: Bool) throws -> RawHTTPResponse {
        guard let end = raw.firstRange(of: Data("\r\n\r\n".utf8)) else {
            throw Failure(description: "no complete response head in \(raw.count) bytes")
        }
        let head = String(decoding: raw[raw.startIndex..<end.lowerBound], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line")
        }
        let headers: [(String, String)] = lines.compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var body = Data(raw[end.upperBound...])
        if headers.contains(where: { $0.0.lowercased() == "transfer-encoding" && $0.1.lowercased().contains("chunked") }
        ) {
            body = try dechunk(body)
        }
        return RawHTTPResponse(status: status, headers: headers, body: isHead ? Data() : body)
    }

    private static func dechunk(_ data: Data) throws -> Data {
        var output = Data()
        var index = data.startIndex
        while let lineEnd = data[index...].firstRange(of: Data("\r\n".utf8)) {
            let sizeText = String(decoding: data[index..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.split(separator: ";")[0], radix: 16) else {
                throw Failure(description: "bad chunk size")
            }
            if size == 0 { break }
            let start = lineEnd.upperBound
            output.append(data[start..<(start + size)])
            index = start + size + 2
        }
        return output
    }
}
