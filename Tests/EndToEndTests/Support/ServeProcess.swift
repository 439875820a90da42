import Foundation

/// `kiosk serve` itself, started in a child process on an ephemeral loopback port with a private copy of the
/// sample content and a fresh data folder (or `kiosk bench` on a folder of the test's: ``bench(folder:arguments:_:)``).
///
/// The child has event loops and a concurrency pool of its own, so the suites running in parallel in the test
/// process can slow it only by sharing the CPU: the tests of timeouts use it, which must not wait for work
/// other tests give the test process's pool (an accepted connection is handed over on that pool).
final class ServeProcess: LoopbackKioskServer {
    let port: Int
    /// The child's own copy of the content folder (the bench's: the folder it serves).
    let contentDirectory: URL
    private let process: Process
    private let root: URL

    private init(port: Int, contentDirectory: URL, process: Process, root: URL) {
        self.port = port
        self.contentDirectory = contentDirectory
        self.process = process
        self.root = root
    }

    /// Runs `body` against a fresh `kiosk serve arguments…` (after `--port 0`, the folders, no periodic reload and
    /// `--log-level critical`), with `environment` added to this process's, and stops the child and removes its
    /// folders afterwards. `prepareContent` may change the content copy before the child reads it.
    static func with<T>(
        arguments: [String] = [], environment: [String: String] = [:],
        prepareContent: (URL) throws -> Void = { _ in }, _ body: (ServeProcess) async throws -> T
    ) async throws -> T {
        try await start(arguments: arguments, environment: environment, prepareContent: prepareContent)
            .serving(body)
    }

    private static func start(
        arguments: [String], environment: [String: String], prepareContent: (URL) throws -> Void
    ) async throws -> ServeProcess {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-serve-\(UUID().uuidString)")
        let content = root.appendingPathComponent("content")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: TestServer.sampleContent, to: content)
        try prepareContent(content)
        return try await launch(
            [
                "serve", "--port", "0", "--content", content.path, "--data", root.appendingPathComponent("data").path,
                "--reload-interval", "0", "--log-level", "critical",
            ] + arguments, environment: environment, contentDirectory: content, root: root)
    }

    /// Runs `body` against a fresh `kiosk bench folder --port 0 arguments…` (`--log-level critical` unless
    /// `arguments` give one), then stops the child. The folder is the caller's: it is left as it is.
    static func bench<T>(
        folder: URL, arguments: [String] = [], _ body: (ServeProcess) async throws -> T
    ) async throws -> T {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let logLevel = arguments.contains("--log-level") ? [] : ["--log-level", "critical"]
        return try await launch(
            ["bench", folder.path, "--port", "0"] + logLevel + arguments, environment: [:], contentDirectory: folder,
            root: root
        ).serving(body)
    }

    /// Starts `kiosk commandLine…` with its standard error in `root` and waits for its listening line.
    private static func launch(
        _ commandLine: [String], environment: [String: String], contentDirectory: URL, root: URL
    ) async throws -> ServeProcess {
        let process = Process()
        process.executableURL = try ChildProcess.kioskExecutable
        process.arguments = commandLine
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        // Nothing of the test process's own: a child holding its stderr (the test runner's pipe) would keep
        // `swift test` waiting for that pipe's end after a crash of the test process, as long as the child lived.
        let errors = root.appendingPathComponent("serve.stderr")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: errors)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        do {
            let port = try await listeningPort(output.fileHandleForReading)
            return ServeProcess(port: port, contentDirectory: contentDirectory, process: process, root: root)
        } catch {
            process.terminate()
            process.waitUntilExit()
            let said = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: root)
            throw TestServerError.unexpected(
                status: 0, body: "kiosk \(commandLine[0]) did not start (\(error)): \(said.suffix(2000))")
        }
    }

    /// What the child wrote on standard error so far.
    var standardError: String {
        (try? String(contentsOf: root.appendingPathComponent("serve.stderr"), encoding: .utf8)) ?? ""
    }

    /// Stops the child as an operator would (`SIGTERM`, a graceful shutdown), with `SIGKILL` after
    /// ``TestServer/stopDeadline``, and removes its folders.
    func stop() async {
        let process = self.process
        _ = try? await RawHTTP.onThread {
            process.terminate()
            let deadline = ContinuousClock.now + TestServer.stopDeadline
            while process.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: root)
    }

    /// Sends `SIGTERM`, as an operator or a process manager stopping the server does.
    func terminate() { process.terminate() }

    /// The child's exit status once it has exited, waiting up to `timeout`; nil if it is still running.
    func exitStatus(within timeout: Duration) async throws -> Int32? {
        let process = self.process
        return try await RawHTTP.onThread {
            let deadline = ContinuousClock.now + timeout
            while process.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
            return process.isRunning ? nil : process.terminationStatus
        }
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
}
