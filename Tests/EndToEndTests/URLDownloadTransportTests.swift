import Crypto
import Foundation
import Testing

@testable import KioskKit

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``URLDownload`` in-process, through both of its transports (SwiftNIO, the default on Linux, and URLSession, what
/// every other platform uses), against `kiosk bench`: the same scenarios end the same way whichever carries them.
@Suite("URLDownload: both transports through the bench's scenarios")
struct URLDownloadTransportTests {
    enum Transport: String, CaseIterable, Sendable {
        case nio, urlSession
    }

    @Test(arguments: Transport.allCases)
    func theScenariosEndTheSameWayThroughEitherTransport(transport: Transport) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-urldownload-\(UUID())")
        let served = root.appendingPathComponent("served")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let bytes = Data((0..<(192 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) })
        try bytes.write(to: served.appendingPathComponent("issue.pdf"))
        let sha256 = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()

        try await ServeProcess.bench(folder: served) { bench in
            func download(_ scenario: String) async throws(KioskError) -> URLDownload.Outcome {
                let url = URL(string: "http://127.0.0.1:\(bench.port)/s/\(scenario)/issue.pdf?run=\(transport)")!
                var configuration = URLDownload.Configuration()
                configuration.retryPolicy = RetryPolicy(baseDelay: 0.05, maximumDelay: 0.2, maximumAttempts: 6)
                configuration.timeout = 10
                let download = try URLDownload(
                    url: url, to: root.appendingPathComponent("\(transport)-\(scenario).pdf"),
                    configuration: configuration,
                    sessionConfiguration: transport == .urlSession ? .ephemeral : nil)
                return try await download.run()
            }
            for scenario in [
                "none", "cut-twice", "busy", "corrupt", "error-page-on-resume", "node-drift", "no-content-range",
                "refused-range", "reset", "length-long",
            ] {
                let outcome = try await download(scenario)
                #expect(outcome.sha256 == sha256, "\(scenario)")
                #expect(outcome.verification == .representationDigest, "\(scenario)")
                #expect(try Data(contentsOf: outcome.file) == bytes, "\(scenario)")
            }
            let cutOnce = try await download("cut")
            #expect(cutOnce.restarts == 0 && cutOnce.bytesFetched == Int64(bytes.count))
            let changed = try await download("validator-change")
            #expect(changed.restarts == 1)
            await #expect(
                throws: KioskError.redirectRefused(
                    from: "http://127.0.0.1:\(bench.port)", to: "http://localhost:\(bench.port)")
            ) {
                _ = try await download("redirect-origin")
            }
        }
    }
}
