import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP relay from an ephemeral loopback port to another loopback port, counting the bytes that cross it each way:
/// what a client costs on the wire, headers and all. It can also play a bad network: cut every connection once it
/// has carried a number of bytes to the client, or flip one byte in the body of one partial response (206). It can
/// keep what clients send, to read the heads of their requests (``requestHeads``). And it can play an outage
/// (``goDown()``, ``comeBack()``): every connection reset, new ones refused; started by the test, or by the proxy
/// itself once a number of bytes have gone to clients, so that the outage comes at a point of the transfer and not
/// at a moment, however loaded the machine.
///
/// One thread accepts; each connection gets one thread per direction. It serves until ``stop()``.
final class LoopbackProxy: Sendable {
    /// `http://127.0.0.1:<port>` of the proxy.
    let baseURL: URL
    private let listener: Int32
    private let upstreamPort: Int
    /// Bytes to the client after which a connection is cut; nil relays everything.
    private let cutAfter: Int?
    /// Which partial responses (counted from 1, across connections) get one byte of their body flipped.
    private let corruptPartialResponses: Range<Int>?
    private let counters = Mutex<(toServer: Int, toClient: Int, connections: Int, cuts: Int)>((0, 0, 0, 0))
    /// Partial responses seen so far, and the `Content-Range` of the first one corrupted.
    private let partials = Mutex<(seen: Int, corrupted: String?)>((0, nil))
    /// Whether the bytes to the server are kept (``requestHeads``).
    private let recordsRequests: Bool
    /// The bytes sent to the server so far, by connection (numbered from 1), when ``recordsRequests``.
    private let sentToServer = Mutex<[Int: [UInt8]]>([:])
    /// Whether the proxy plays an outage, and the connections relayed meanwhile, by number.
    private let outage = Mutex<(isDown: Bool, live: [Int: Pair], refused: Int)>((false, [:], 0))
    /// Bytes to clients (all connections together) after which the proxy goes down by itself, once; nil never.
    private let goesDownAfter: Mutex<Int?>

    /// A proxy to `127.0.0.1:upstreamPort` that cuts each connection (both ways, at once) once it has carried
    /// `cutAfter` bytes to the client, and flips the middle byte of the body of the 206 responses it relays whose
    /// number (from 1) is in `corruptPartialResponses` (`5..<6`: the fifth only). With `recordsRequests`, it keeps
    /// the bytes sent to the server, for ``requestHeads``. With `goesDownAfter`, it calls ``goDown()`` by itself once
    /// that many bytes have gone to clients; the rest of the read that reached the bound is not relayed.
    init(
        to upstreamPort: Int, cutAfter: Int? = nil, corruptPartialResponses: Range<Int>? = nil,
        recordsRequests: Bool = false, goesDownAfter: Int? = nil
    ) throws {
        let (fd, port) = try RawHTTP.listenOnLoopback()
        listener = fd
        self.upstreamPort = upstreamPort
        self.cutAfter = cutAfter
        self.corruptPartialResponses = corruptPartialResponses
        self.recordsRequests = recordsRequests
        self.goesDownAfter = Mutex(goesDownAfter)
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Bytes sent by clients to the server so far.
    var bytesToServer: Int { counters.withLock { $0.toServer } }
    /// Bytes sent by the server to clients so far.
    var bytesToClient: Int { counters.withLock { $0.toClient } }
    /// Connections accepted so far.
    var connections: Int { counters.withLock { $0.connections } }
    /// Connections cut so far.
    var cuts: Int { counters.withLock { $0.cuts } }
    /// The `Content-Range` of the first partial response whose body got a flipped byte, once it went through.
    var corruptedRange: String? { partials.withLock { $0.corrupted } }

    /// The heads (request line and header lines, `\r\n`-separated) of the requests clients sent so far, connection by
    /// connection, each connection's in order; empty unless made with `recordsRequests`. A request's body is skipped
    /// by its `Content-Length`.
    var requestHeads: [String] {
        let streams = sentToServer.withLock { $0.sorted { $0.key < $1.key }.map(\.value) }
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        return streams.flatMap { bytes -> [String] in
            var heads: [String] = []
            var start = 0
            while let end = bytes[start...].firstRange(of: separator) {
                let head = String(decoding: bytes[start..<end.lowerBound], as: UTF8.self)
                heads.append(head)
                let length = head.split(separator: "\r\n").lazy.compactMap { line -> Int? in
                    let parts = line.split(separator: ":", maxSplits: 1)
                    guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                    return Int(parts[1].trimmingCharacters(in: .whitespaces))
                }.first
                start = min(bytes.count, end.upperBound + (length ?? 0))
            }
            return heads
        }
    }

    /// Connections refused during outages so far.
    var refusedConnections: Int { outage.withLock { $0.refused } }

    /// Starts an outage: every relayed connection is reset at once, and every new one is reset as soon as it is
    /// accepted, before a byte crosses (what a client sees of a server that went away), until ``comeBack()``.
    func goDown() {
        // Under the lock: a connection leaves `live` before its sockets are closed, so none is reset after.
        outage.withLock { outage in
            outage.isDown = true
            for pair in outage.live.values { pair.reset() }
        }
    }

    /// Ends the outage: new connections are relayed again.
    func comeBack() {
        outage.withLock { $0.isDown = false }
    }

    /// Stops accepting; connections in progress end when either side closes.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        RawHTTP.acceptConnections(on: listener) { client in relay(client) }
    }

    /// Relays the accepted connection `client` to the upstream port, or resets it during an outage.
    private func relay(_ client: Int32) {
        if outage.withLock({ outage in
            if outage.isDown { outage.refused += 1 }
            return outage.isDown
        }) {
            Self.resetAndClose(client)
            return
        }
        let server = RawHTTP.makeTCPSocket()
        guard server >= 0, RawHTTP.connectToLoopback(server, port: upstreamPort) else {
            close(client)
            if server >= 0 { close(server) }
            return
        }
        let connection = counters.withLock {
            $0.connections += 1
            return $0.connections
        }
        let pair = Pair(client: client, server: server)
        outage.withLock { $0.live[connection] = pair }
        Thread { [self] in pump(from: client, to: server, toServer: true, pair: pair, connection: connection) }
            .start()
        Thread { [self] in pump(from: server, to: client, toServer: false, pair: pair, connection: connection) }
            .start()
    }

    /// Closes `socket` with a reset (`SO_LINGER` 0) rather than an orderly close.
    private static func resetAndClose(_ socket: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(socket, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        close(socket)
    }

    /// The two sockets of one relayed connection, closed when both directions have ended.
    private final class Pair: Sendable {
        let client: Int32
        let server: Int32
        private let open = Mutex(2)

        init(client: Int32, server: Int32) {
            self.client = client
            self.server = server
        }

        /// Ends both directions at once (the pumps then close the sockets).
        func reset() {
            shutdown(client, Int32(SHUT_RDWR))
            shutdown(server, Int32(SHUT_RDWR))
        }

        /// Counts one direction ended; whether it was the last (then ``closeSockets()``).
        func directionEnded() -> Bool {
            open.withLock {
                $0 -= 1
                return $0 == 0
            }
        }

        func closeSockets() {
            close(client)
            close(server)
        }
    }

    private func pump(from source: Int32, to target: Int32, toServer: Bool, pair: Pair, connection: Int) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var budget = toServer ? Int.max : (cutAfter ?? Int.max)
        var scanner = corruptPartialResponses == nil || toServer ? nil : ResponseScanner()
        relay: while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, min($0.count, budget)) }
            guard count > 0 else {
                if budget == 0 {
                    // The cut: both directions of both sockets end now.
                    counters.withLock { $0.cuts += 1 }
                    shutdown(source, Int32(SHUT_RDWR))
                    shutdown(target, Int32(SHUT_RDWR))
                }
                break
            }
            budget -= count
            if scanner != nil {
                buffer.withUnsafeMutableBytes { bytes in
                    scanner!.scan(UnsafeMutableRawBufferPointer(rebasing: bytes[0..<count])) { range in
                        partials.withLock { partials in
                            partials.seen += 1
                            guard corruptPartialResponses?.contains(partials.seen) == true else { return false }
                            if partials.corrupted == nil { partials.corrupted = range }
                            return true
                        }
                    }
                }
            }
            let toClient = counters.withLock {
                if toServer { $0.toServer += count } else { $0.toClient += count }
                return $0.toClient
            }
            if !toServer,
                goesDownAfter.withLock({ bound in
                    guard let limit = bound, toClient >= limit else { return false }
                    bound = nil
                    return true
                })
            {
                goDown()
                break relay
            }
            if toServer, recordsRequests {
                sentToServer.withLock { $0[connection, default: []] += buffer[0..<count] }
            }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { write(target, $0.baseAddress! + sent, count - sent) }
                guard written > 0 else { break relay }
                sent += written
            }
        }
        shutdown(target, Int32(SHUT_WR))
        shutdown(source, Int32(SHUT_RD))
        if pair.directionEnded() {
            outage.withLock { _ = $0.live.removeValue(forKey: connection) }
            pair.closeSockets()
        }
    }
}

/// Follows the HTTP responses of one connection (headers, then `Content-Length` bytes of body) and flips the
/// middle byte of the body of a 206 response that `claim` accepts.
private struct ResponseScanner {
    private var header: [UInt8] = []
    private var bodyLeft = 0
    private var bodyOffset = 0
    private var flipAt: Int?

    mutating func scan(_ bytes: UnsafeMutableRawBufferPointer, claim: (_ contentRange: String) -> Bool) {
        var index = 0
        while index < bytes.count {
            if bodyLeft > 0 {
                let take = min(bodyLeft, bytes.count - index)
                if let flip = flipAt, flip >= bodyOffset, flip < bodyOffset + take {
                    bytes[index + flip - bodyOffset] ^= 0xFF
                    flipAt = nil
                }
                bodyOffset += take
                bodyLeft -= take
                index += take
                continue
            }
            header.append(bytes[index])
            index += 1
            guard header.count >= 4, header.suffix(4).elementsEqual([13, 10, 13, 10]) else { continue }
            let text = String(decoding: header, as: UTF8.self)
            header = []
            let lines = text.split(separator: "\r\n")
            let fields = lines.dropFirst().map { line -> (String, String) in
                let parts = line.split(separator: ":", maxSplits: 1)
                return (
                    parts[0].lowercased(), parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
                )
            }
            let length = fields.first { $0.0 == "content-length" }.flatMap { Int($0.1) } ?? 0
            bodyLeft = length
            bodyOffset = 0
            flipAt = nil
            if lines.first?.contains(" 206 ") == true, length > 0,
                claim(fields.first { $0.0 == "content-range" }?.1 ?? "")
            {
                flipAt = length / 2
            }
        }
    }
}
