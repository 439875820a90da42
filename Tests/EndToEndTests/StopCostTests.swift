import Foundation
import KioskCore
import KioskServer
import Testing

@testable import KioskKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// #29: what a stop of `kiosk get` costs in bytes on the wire. The chunks in flight journal how far they have
/// arrived (``ChunkPrefix``, every 256 KiB, and exactly at a graceful stop), so a stop loses at most that much per
/// connection plus what was in the socket, instead of the chunk each connection was receiving.
@Suite("What a stop costs")
struct StopCostTests {
    typealias Support = KioskKitTestSupport
    static let product = "com.example.kiosk.test.stops"
    static let path = "Contents/issue.bin"

    /// 256 MiB over a link slower than the disk (4 connections of 10 MiB/s each: 40 MiB/s), stopped 6 times,
    /// `SIGINT` and `SIGKILL` alternating, each stop once the server has sent another seventh of the file; then a
    /// last run finishes with the exact bytes. What it checks does not depend on the machine's load: at every
    /// `SIGINT` the journal records how far the chunks in flight had arrived (before #29 it kept whole chunks only,
    /// and lost the rest), and the file ends exact. What the stops cost in bytes is printed, not checked: it
    /// depends on the client's CPU (what sat in its sockets and its pipeline at a `SIGKILL`: one CI run beside the
    /// whole suite wasted 0.5 to 9 MiB a stop, a quiet machine 0.6 to 1.3 MiB). The figures and the before/after
    /// comparison are in RELIABILITY.md.
    @Test func sixStopsOfAGetCostAFewPercentOfTheFile() async throws {
        let size = 256 << 20
        let throttle = try FaultSpec(parsing: "throttle=10MiB/s")
        try await TestServer.with(configure: { $0.faults = .spec(throttle) }) { server in
            let data = Support.randomData(size)
            let hashes = try await Support.publish(Self.product, version: "1", files: [Self.path: data], on: server)
            let purchase = try await server.buy(Self.product)
            let cache = server.makeScratchDirectory()
            let command = [
                "get", Self.product, "--receipt", "-", "--server", server.baseURL.absoluteString, "--cache", cache.path,
                "--connections-per-file", "4",
            ]
            let start = server.contentBytesSent
            var lines: [String] = []
            var wastes: [Int64] = []
            var prefixesAtSIGINT: [Int] = []
            for stop in 1...6 {
                let signal = stop % 2 == 1 ? SIGINT : SIGKILL
                let target = start + Int64(size) * Int64(stop) / 7
                let outcome = try await ChildProcess.runKiosk(
                    command, input: Data(purchase.receiptData.utf8), killWhen: { server.contentBytesSent >= target },
                    killSignal: signal)
                // A stop that came after the end (a machine much faster than the throttle) would prove nothing.
                try #require(outcome.exitStatus != 0, "run \(stop) finished before its stop: \(outcome)")
                let kept = Support.keptBytes(root: cache, productID: Self.product)[Self.path] ?? 0
                if signal == SIGINT {
                    prefixesAtSIGINT.append(Support.journaledChunkPrefixes(root: cache, productID: Self.product))
                }
                let sent = try await Support.settledBytesSent(server) - start
                wastes.append(sent - Int64(kept) - wastes.reduce(0, +))
                lines.append(
                    "  stop \(stop) (\(signal == SIGINT ? "SIGINT " : "SIGKILL")): \(sent >> 20) MiB sent, "
                        + "\(kept >> 20) MiB kept, this stop wasted \(wastes.last! >> 10) KiB"
                        + (signal == SIGINT ? ", \(prefixesAtSIGINT.last!) chunks in flight journaled" : ""))
            }
            let last = try await ChildProcess.runKiosk(command, input: Data(purchase.receiptData.utf8))
            #expect(last.exitStatus == 0, "\(last)")
            let content = cache.appendingPathComponent("Content/\(Self.product)/1/\(Self.path)")
            #expect(try Support.sha256(of: content) == hashes[Self.path])
            let sent = try await Support.settledBytesSent(server) - start
            let ratio = Double(sent) / Double(size)
            let lost = Double(sent - Int64(size)) / 6 / Double(1 << 20)
            print(
                (["stop cost: 256 MiB, kiosk get --connections-per-file 4, 10 MiB/s a response (40 MiB/s), "
                    + "6 stops (SIGINT, SIGKILL alternating), then a run to the end"] + lines
                    + [
                        String(
                            format: "  the server sent %.1f MiB for a %d MiB file: %.3f×, %.2f MiB per stop",
                            Double(sent) / Double(1 << 20), size >> 20, ratio, lost)
                    ]).joined(separator: "\n"))
            #expect(
                prefixesAtSIGINT.allSatisfy { $0 > 0 },
                "chunks in flight with their progress journaled at each SIGINT: \(prefixesAtSIGINT)")
        }
    }
}
