import Foundation
import KioskCore
import KioskServer
import Testing

/// `kiosk get` as a person runs it, in a child process: Ctrl-C pauses, says where, and the same command resumes.
@Suite("kiosk get", .serialized, .timeLimit(.minutes(3)))
struct GetCommandTests {
    typealias Support = KioskKitTestSupport

    static let product = "com.example.kiosk.test.ctrl-c"

    @Test func ctrlCPausesSaysWhereAndTheSameCommandResumes() async throws {
        // A throttled server and one connection, so that the download is still running when Ctrl-C comes: the 4 MiB
        // file's chunks (about 1 MiB each) one after the other at 256 KiB/s, about 16 s in all. The progress line
        // counts verified chunks only; with the chunks in parallel, they were all verified within a moment of each
        // other, and a loaded machine once saw the last one before the interrupt was handled.
        try await TestServer.with(configure: { $0.faults = .spec(try! FaultSpec(parsing: "throttle=256KiB/s")) }) {
            server in
            let data = Support.randomData(4 << 20)
            let hashes = try await Support.publish(
                Self.product, version: "1", files: ["Contents/level.bin": data], on: server)
            let purchase = try await server.buy(Self.product)
            let cache = server.makeScratchDirectory()
            let command = [
                "get", Self.product, "--receipt", "-", "--server", server.baseURL.absoluteString, "--cache", cache.path,
                "--connections-per-file", "1",
            ]
            let input = Data(purchase.receiptData.utf8)

            // Ctrl-C once a progress line shows 10 % or more.
            let interrupted = try await ChildProcess.runKiosk(command, input: input) { output in
                output.split(separator: "\n").contains { line in
                    (Int(line.drop { $0 == " " }.prefix { $0.isNumber }) ?? 0) >= 10
                }
            }
            #expect(interrupted.exitStatus == 130, "\(interrupted)")
            let line = interrupted.standardError.split(separator: "\n").first { $0.hasPrefix("Paused at ") }
            let paused = try #require(line, "\(interrupted.standardError)")
            #expect(paused.hasSuffix(" of 4.2 MB). Run the same command to resume."), "\(paused)")
            let percent = try #require(
                paused.wholeMatch(of: /Paused at (\d{1,3}) % \(.+ of .+\)\. Run the same command to resume\./))
            #expect((10..<100).contains(Int(percent.1) ?? 0), "\(paused)")
            let exit = try #require(interrupted.exitAfterInterrupt)
            // The command exits within a second of Ctrl-C; the bound leaves room for a loaded machine.
            #expect(exit < .seconds(3), "exited \(exit) after Ctrl-C")

            let resumed = try await ChildProcess.runKiosk(command, input: input)
            #expect(resumed.exitStatus == 0, "\(resumed)")
            let installed = cache.appendingPathComponent("Content/\(Self.product)/1/Contents/level.bin")
            #expect(try Support.sha256(of: installed) == hashes["Contents/level.bin"])
            // Resumed, not started over: less than the whole file crossed the wire the second time.
            #expect(server.contentBytesSent < Int64(data.count) * 2)
        }
    }
}
