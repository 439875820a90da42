import Foundation
import KioskCore
import Testing

/// The `kiosk serve` binary itself, started as an operator would.
@Suite("kiosk serve: options, environment and defaults", .timeLimit(.minutes(2)))
struct ServeCommandTests {
    /// The `kiosk` executable built beside the test bundle.
    static let kiosk = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("kiosk")

    @Test func anOptionWinsOverItsEnvironmentVariable() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-serve-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let process = Process()
        process.executableURL = Self.kiosk
        process.arguments = [
            "serve", "--port", "0", "--max-installations", "5", "--content", TestServer.sampleContent.path, "--data",
            data.path, "--reload-interval", "0", "--log-level", "critical",
        ]
        // The reproduction: KIOSK_MAX_INSTALLATIONS=3 kiosk serve --max-installations 5 served 3.
        process.environment = ProcessInfo.processInfo.environment.merging(["KIOSK_MAX_INSTALLATIONS": "3"]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let port = try await Self.listeningPort(output.fileHandleForReading)

        let purchase = try await Self.post(
            port, "/sandbox/purchases", SandboxPurchaseRequest(productID: TestServer.Sample.book), expecting: 201,
            as: SandboxPurchaseResponse.self)
        for installation in 1...5 {
            _ = try await Self.post(
                port, "/v1/downloads",
                GrantRequest(
                    proof: .receipt(purchase.receiptData), productID: TestServer.Sample.book,
                    installationID: "installation-\(installation)"), expecting: 200, as: Grant.self)
        }
        let sixth = try await Self.post(
            port, "/v1/downloads",
            GrantRequest(
                proof: .receipt(purchase.receiptData), productID: TestServer.Sample.book,
                installationID: "installation-6"),
            expecting: 403, as: APIErrorEnvelope.self)
        #expect(sixth.error.code == "installation_limit")
    }

    /// Reads standard output up to the `Kiosk listening on http://127.0.0.1:PORT` line; fails if the process ends
    /// first.
    private static func listeningPort(_ handle: FileHandle) async throws -> Int {
        let line = try await RawHTTP.onThread { () -> String in
            var bytes = Data()
            while !bytes.contains(UInt8(ascii: "\n")) {
                let chunk = handle.availableData
                guard !chunk.isEmpty else { break }
                bytes.append(chunk)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        guard let colon = line.lastIndex(of: ":"),
            let port = Int(line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw TestServerError.unexpected(status: 0, body: "kiosk serve printed '\(line)'") }
        return port
    }

    private static func post<Body: Encodable, T: Decodable>(
        _ port: Int, _ target: String, _ body: Body, expecting status: Int, as type: T.Type
    ) async throws -> T {
        let response = try await RawHTTP.send(
            port: port, method: "POST", target: target, headers: [("Content-Type", "application/json")],
            body: try KioskJSON.encode(body))
        guard response.status == status else {
            throw TestServerError.unexpected(status: response.status, body: response.text)
        }
        return try KioskJSON.decode(T.self, from: response.body)
    }
}
