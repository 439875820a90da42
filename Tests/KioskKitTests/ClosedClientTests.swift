import Foundation
import Testing

@testable import KioskKit

/// The streams of a closed client end at once (no server needed: a client with nothing to resume sends no request).
@Suite("Closed client streams", .timeLimit(.minutes(1)))
struct ClosedClientTests {
    /// Counts the calls it receives.
    final class Recorder: KioskObserver {
        let calls = Locked(0)
        func kioskClient(_ client: KioskClient, didUpdate downloads: [DownloadSnapshot]) async {
            calls.withLock { $0 += 1 }
        }
        func kioskClient(_ client: KioskClient, didInstall content: InstalledContent) async {
            calls.withLock { $0 += 1 }
        }
        func kioskClient(_ client: KioskClient, didRemove productID: String, version: String) async {
            calls.withLock { $0 += 1 }
        }
    }

    @Test func eventsAndObserversAfterCloseEndAtOnce() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-closed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let client = try await KioskClient(serverURL: URL(string: "http://127.0.0.1:9")!, cacheRoot: root)
        var before = client.events.makeAsyncIterator()
        await client.close()
        #expect(await before.next() == nil)
        var after = client.events.makeAsyncIterator()
        #expect(await after.next() == nil)

        let recorder = Recorder()
        let observation = client.addObserver(recorder)
        await observation.task.value  // ends on its own: its stream is already finished
        #expect(recorder.calls.withLock { $0 } == 0)
    }
}
