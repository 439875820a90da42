import ArgumentParser
import Foundation
import KioskCore
import KioskServer
import Logging

/// `kiosk bench DIR`: serve a folder for testing downloads, with no purchase, under fault scenarios.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Serve a folder for testing any client's downloads, under fault scenarios.",
        discussion: """
            Serves every regular file in DIR with no purchase and the HTTP semantics of Kiosk's content: ranges \
            (single and multiple), If-Range, If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since, a \
            strong ETag (the file's SHA-256) and Repr-Digest. Links, hidden files and anything outside DIR are never \
            served.

            A file is at /PATH with no fault (a Kiosk-Fault header or a fault=SPEC query parameter asks for one), and \
            at /s/SCENARIO/PATH under a scenario: a sequence of faults, one step per request of a run (the first \
            request gets the first step…). GET /s/ lists the scenarios. A run is named by ?run=NAME, or else by the \
            client's address and User-Agent. --scenarios adds scenarios from a JSON file (see \
            docs/testing-downloads.md).

            The verdict: every request under a scenario is recorded; a client (or its test script) says what it ended \
            with by PUT /s/SCENARIO/PATH with {"sha256": "…"} or {"error": "…"} (same ?run=). GET /s/report gives the \
            verdict on every run as JSON; with --report FILE the bench writes it when it stops, prints it as a table \
            and exits with status 1 unless every run passed.

            Prints "Kiosk listening on http://HOST:PORT" on standard output once it accepts connections; logs go to \
            standard error. It listens on loopback addresses only unless --allow-public.

            Examples:
              kiosk bench ./downloads --port 0
              curl -C - -o big.bin http://127.0.0.1:8080/s/cut/big.bin
              kiosk bench ./downloads --scenarios my-scenarios.json --seed 42
              kiosk bench ./downloads --report verdict.json
            """)

    @Argument(help: "The folder to serve.")
    var folder: String

    @Option(help: "The address to bind (loopback unless --allow-public).")
    var host = "127.0.0.1"

    @Option(help: "The port to bind (0: any free port).")
    var port = 8080

    @Flag(help: "Allow a non-loopback --host: the folder is then served to anyone who can reach it.")
    var allowPublic = false

    @Option(help: "The seed of the scenarios' random choices (by default one is drawn and logged).")
    var seed: UInt64?

    @Option(help: "A JSON file of scenarios to add to the built-in ones.")
    var scenarios: String?

    @Option(
        help: ArgumentHelp(
            "Write the verdict on every run as JSON to this file when the bench stops (SIGINT, SIGTERM), print it as a "
                + "table, and exit with status 1 unless every run passed.",
            valueName: "file"))
    var report: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    func validate() throws {
        _ = try StandardErrorLogging.level(logLevel)
        let configuration = try benchConfiguration()
        do {
            try configuration.validate()
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The configuration from the options, with the scenario file read and checked.
    private func benchConfiguration() throws -> BenchConfiguration {
        var configuration = BenchConfiguration(folder: folder)
        configuration.host = host
        configuration.port = port
        configuration.allowPublic = allowPublic
        configuration.seed = seed
        if let scenarios {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: scenarios))
            } catch {
                throw ValidationError("The scenario file \(scenarios) cannot be read.")
            }
            do {
                configuration.scenarios = try BenchScenarios(file: data)
            } catch {
                throw ValidationError("\(scenarios): \(error)")
            }
        }
        return configuration
    }

    func run() async throws {
        StandardErrorLogging.bootstrap(level: try StandardErrorLogging.level(logLevel))
        let configuration = try benchConfiguration()
        let server: BenchServer
        do {
            server = try BenchServer(configuration: configuration, logger: Logger(label: "kiosk-bench"))
        } catch {
            throw ValidationError(error.description)
        }
        try await server.run(gracefulShutdownSignals: [.sigterm, .sigint]) { address, _ in
            FileHandle.standardOutput.write(Data("Kiosk listening on \(address)\n".utf8))
        }
        guard let report else { return }
        let verdict = await server.report()
        do {
            try KioskJSON.encode(verdict).write(to: URL(fileURLWithPath: report), options: .atomic)
        } catch {
            throw ValidationError("The report could not be written to \(report): \(error.localizedDescription)")
        }
        FileHandle.standardOutput.write(Data(verdict.table.utf8))
        if !verdict.isPass { throw ExitCode(1) }
    }
}
