import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP relay from an ephemeral loopback port to another loopback port, counting the bytes that cross it each way:
/// what a client costs on the wire, headers and all. It can also play a bad network: cut every connection once it
/// has carried a number of bytes to the client.
///
/// One thread accepts; each connection gets one thread per direction. It serves until ``stop()``.
final class LoopbackProxy: Sendable {
    /// `http://127.0.0.1:<port>` of the proxy.
    let baseURL: URL
    private let listener: Int32
    private let upstreamPort: Int
    /// Bytes to the client after which a connection is cut; nil relays everything.
    private let cutAfter: Int?
    private let counters = Mutex<(toServer: Int, toClient: Int, connections: Int, cuts: Int)>((0, 0, 0, 0))

    /// A proxy to `127.0.0.1:upstreamPort` that cuts each connection (both ways, at once) once it has carried
    /// `cutAfter` bytes to the client.
    init(to upstreamPort: Int, cutAfter: Int? = nil) throws {
        let (fd, port) = try RawHTTP.listenOnLoopback()
        listener = fd
        self.upstreamPort = upstreamPort
        self.cutAfter = cutAfter
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

    /// Stops accepting; connections in progress end when either side closes.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let server = RawHTTP.makeTCPSocket()
            guard server >= 0, RawHTTP.connectToLoopback(server, port: upstreamPort) else {
                close(client)
                if server >= 0 { close(server) }
                continue
            }
            counters.withLock { $0.connections += 1 }
            let pair = Pair(client: client, server: server)
            Thread { [self] in pump(from: client, to: server, toServer: true, pair: pair) }.start()
            Thread { [self] in pump(from: server, to: client, toServer: false, pair: pair) }.start()
        }
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

        func directionEnded() {
            guard
                open.withLock({
                    $0 -= 1; return $0 == 0
                })
            else { return }
            close(client)
            close(server)
        }
    }

    private func pump(from source: Int32, to target: Int32, toServer: Bool, pair: Pair) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var budget = toServer ? Int.max : (cutAfter ?? Int.max)
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
            counters.withLock {
                if toServer { $0.toServer += count } else { $0.toClient += count }
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
        pair.directionEnded()
    }
}
