import Foundation
import KioskCore
import Synchronization
import Testing

@testable import KioskKit

/// KioskKit when the server cannot be reached: a download waits for the network, asking the server now and then
/// whether it is back (on a clock the test moves), and goes on by itself when it is.
@Suite("KioskKit without a network", .serialized, .timeLimit(.minutes(3)))
struct KioskKitOfflineTests {
    typealias Support = KioskKitTestSupport

    static let product = "com.example.kiosk.test.offline"

    /// The issue's measurement: with the default retry policy a download failed after about 98 s without a network
    /// (8 attempts), and nothing started it again. Here the server goes away mid-download for 10 minutes of the
    /// client's time (the default policy, 1 s doubling up to 60 s): the download changes state once, to
    /// `waitingForNetwork`, each probe of the server changes nothing, and when the server is back the download goes
    /// on from its bytes on disk by itself and installs the exact bytes.
    @Test func aServerGoneForLongerThanTheRetryBudgetIsWaitedForAndTheDownloadGoesOnByItself() async throws {
        try await TestServer.with { server in
            let data = Support.randomData(8 << 20)
            let hashes = try await Support.publish(
                Self.product, version: "1", files: ["Contents/issue.pdf": data], on: server)
            let purchase = try await server.buy(Self.product)
            // The server goes away by itself after 2 MiB of the 8 have crossed: mid-download, whatever the load.
            let proxy = try LoopbackProxy(to: server.port, goesDownAfter: 2 << 20)
            defer { proxy.stop() }
            let clock = ManualKioskClock()
            var configuration = KioskClient.Configuration()
            configuration.clock = clock
            let client = try await KioskClient(
                serverURL: proxy.baseURL, cacheRoot: server.makeScratchDirectory(), configuration: configuration)
            let states = Mutex<[String]>([])
            let events = client.events
            let recorder = Task {
                for await case .stateChanged(let snapshot) in events where snapshot.productID == Self.product {
                    states.withLock { $0.append(snapshot.state.name) }
                }
            }
            defer { recorder.cancel() }
            _ = try await client.enqueue(productID: Self.product, receipt: purchase.receiptData)
            do {
                try await Support.eventually("waiting for the network") {
                    states.withLock { $0.last } == "waiting_for_network"
                }
            } catch {
                // Which way the download went instead.
                let download = await client.download(for: Self.product)
                let seen = states.withLock { $0 }
                let crossed = proxy.bytesToClient
                Issue.record("states: \(seen); now \(String(describing: download?.state)); \(crossed) bytes crossed")
                throw error
            }
            let statesBefore = states.withLock { $0.count }
            let wentDown = clock.now
            var probes = 0
            // Bounded: each step moves the clock to the next probe, 1 s at least, at most 60 s apart.
            while clock.now.timeIntervalSince(wentDown) < 600, probes < 100 {
                clock.advance(to: try await clock.nextDeadline())
                probes += 1
            }
            // The next probe is armed only once this one has found the server still gone.
            _ = try await clock.nextDeadline()
            #expect(clock.now.timeIntervalSince(wentDown) >= 600)
            #expect(probes >= 10 && probes < 30, "\(probes) probes in 10 minutes")
            #expect(proxy.refusedConnections >= probes)
            #expect(await client.download(for: Self.product)?.state == .waitingForNetwork)
            // One state change for the whole outage: none per probe.
            #expect(states.withLock { Array($0[(statesBefore - 1)...]) } == ["waiting_for_network"])

            proxy.comeBack()
            clock.advance(to: try await clock.nextDeadline())
            let content = try await client.waitUntilInstalled(productID: Self.product)
            #expect(try Support.sha256(of: content.url(for: "Contents/issue.pdf")) == hashes["Contents/issue.pdf"])
            #expect(
                states.withLock { Array($0[statesBefore...]) } == ["waiting", "active", "verifying", "finished"])
            // Resumed from the bytes on disk, not started over.
            #expect(proxy.bytesToClient < data.count + data.count / 2, "\(proxy.bytesToClient) bytes")
            await client.close()
        }
    }
}
