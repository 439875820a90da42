import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Holds back a connection's partial TCP segments while a content answer's head and its body's first region are
/// written (Linux's `TCP_CORK`, what nginx's `tcp_nopush` does with `sendfile`): the head then leaves in the same
/// full-sized segments as the body's first bytes, instead of in a small segment of its own (the connection has
/// `TCP_NODELAY`). The cork comes off right after that first write, whatever the socket took of it, so that the
/// body's last partial segment is never held back (Linux would hold it up to 200 ms) and the rest of a body that did
/// not fit goes out as before.
///
/// Measured with `scripts/bench/spike.sh` (BENCHMARKS.md): 2,000 connections on a 1 MiB file went from 0.65× to
/// 0.87× nginx in the same run; a cork kept until the whole body was out cost twice the CPU per request at 10,000
/// connections, where most bodies take several writes.
///
/// Elsewhere than on Linux, and on a socket that refuses the option (a Unix domain socket), it does nothing.
struct TCPCork {
    /// Whether the socket is corked now.
    private(set) var isOn = false
    /// Whether the socket refused the option once: it is not asked again.
    private var refused = false

    /// Corks or uncorks `channel`'s socket, if that changes anything. Runs on the channel's event loop.
    mutating func set(_ on: Bool, on channel: any Channel) {
        #if os(Linux)
            guard on != isOn, !refused, let options = channel.syncOptions else { return }
            do {
                try options.setOption(Self.option, value: on ? 1 : 0)
                isOn = on
            } catch {
                refused = true
            }
        #endif
    }

    #if os(Linux)
        private static let option = ChannelOptions.Types.SocketOption(
            level: .tcp, name: NIOBSDSocket.Option(rawValue: CInt(TCP_CORK)))
    #endif
}
