import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One client connection over a plain blocking socket, for playing a hostile client: send a request a byte at a
/// time, stop halfway, never read. Every blocking call runs on its own thread (``RawConnection/onThread(_:)``), so
/// it never occupies the test's concurrency pool.
final class RawConnection: Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let fd: Int32

    /// Connects to `127.0.0.1:port`; a `receiveBuffer` size shrinks the socket's receive buffer (a slow reader).
    init(port: Int, receiveBuffer: Int? = nil) throws {
        fd = RawHTTP.makeTCPSocket()
        guard fd >= 0 else { throw Failure(description: "socket() failed") }
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        guard RawHTTP.connectToLoopback(fd, port: port) else {
            close(fd)
            throw Failure(description: "connect() failed")
        }
    }

    deinit { close(fd) }

    /// Sends `text`; false when the server has closed the connection.
    @discardableResult
    func send(_ text: String) -> Bool { send(Data(text.utf8)) }

    /// Sends `data`; false when the server has closed the connection.
    @discardableResult
    func send(_ data: Data) -> Bool { RawHTTP.sendAll(fd, data) }

    /// Closes the client's sending side (a half-closure: the client will send nothing more, and still reads).
    func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Reads for up to `timeout`, stopping early when the server closes the connection or once `stopAfter` bytes
    /// have arrived: what arrived, and whether the connection is closed.
    func receive(for timeout: Duration, stopAfter limit: Int = .max) -> (data: Data, closed: Bool) {
        let deadline = ContinuousClock.now + timeout
        var received = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let remaining = deadline - ContinuousClock.now
            let milliseconds = Int32(
                remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000)
            guard poll(&descriptor, 1, max(1, milliseconds)) > 0 else { continue }
            let count = read(fd, &chunk, chunk.count)
            if count > 0 {
                received.append(chunk, count: count)
                if received.count >= limit { return (received, false) }
            } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                return (received, true)
            }
        }
        return (received, false)
    }

    /// Whether the server closes the connection within `timeout` (what it sends meanwhile is discarded).
    func isClosed(within timeout: Duration) -> Bool { receive(for: timeout).closed }

    /// Runs blocking work on a new thread and awaits its result.
    static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try work() }) }
            thread.start()
        }
    }
}
