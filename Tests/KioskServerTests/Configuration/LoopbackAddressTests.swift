import Foundation
import KioskCore
import KioskServerTestSupport
import Logging
import Testing

@testable import KioskServer

@Suite("Loopback addresses and the public sandbox warning")
struct LoopbackAddressTests {
    @Test(arguments: [
        ("127.0.0.1", true), ("127.255.0.9", true), ("::1", true), ("[::1]", true), ("0:0:0:0:0:0:0:1", true),
        ("localhost", true), ("LOCALHOST", true), ("::ffff:127.0.0.1", true), ("0.0.0.0", false), ("::", false),
        ("128.0.0.1", false), ("10.0.0.1", false), ("::2", false), ("::ffff:10.0.0.1", false),
        ("kiosk.example.com", false), ("localhost.example.com", false), ("", false),
    ])
    func loopback(_ host: String, _ expected: Bool) {
        #expect(LoopbackAddress.contains(host) == expected)
    }

    @Test func aPublicSandboxIsWarnedAboutAtEveryStart() async throws {
        let data = try ServerTestDirectory("public-sandbox-data")
        let content = try ServerTestDirectory("public-sandbox-content")
        var configuration = ServerConfiguration()
        configuration.host = "0.0.0.0"
        configuration.port = 0
        configuration.allowPublicSandbox = true
        configuration.contentDirectory = content.url
        configuration.dataDirectory = data.url
        configuration.reloadInterval = .zero
        let log = LogRecorder()
        for start in 1...2 {
            let server = try await KioskHTTPServer(configuration: configuration, logger: log.logger)
            let running = Task { try await server.run() }
            running.cancel()
            _ = try? await running.value
            #expect(log.messages.filter { $0.contains("sells everything for free") }.count == start)
        }
        configuration.host = "127.0.0.1"
        let quiet = LogRecorder()
        let server = try await KioskHTTPServer(configuration: configuration, logger: quiet.logger)
        let running = Task { try await server.run() }
        running.cancel()
        _ = try? await running.value
        #expect(!quiet.messages.contains { $0.contains("sells everything for free") })
    }
}
