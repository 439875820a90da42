import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the built `kiosk` tool in a child process, so that a test can watch it trap, run out of memory or hang
/// without taking the test process down, and measures its peak resident memory.
enum ChildProcess {
    /// How a child ended.
    struct Outcome: Sendable, CustomStringConvertible {
        /// The exit status, when it exited.
        var exitStatus: Int32?
        /// The signal that ended it, when one did (including the `SIGKILL` of a limit below).
        var signal: Int32?
        /// Peak resident memory of the child itself, in bytes (`VmHWM`, sampled).
        var peakRSS: Int
        /// Whether it was killed for passing the memory cap or the time limit.
        var killedForLimit: Bool
        var standardOutput: String
        var standardError: String
        /// With `interruptWhen`: how long the child took to exit after its `SIGINT`; nil when it was never sent.
        var exitAfterInterrupt: Duration? = nil

        var description: String {
            let end = exitStatus.map { "exit \($0)" } ?? "signal \(signal ?? -1)"
            return "\(end), peak RSS \(peakRSS >> 20) MiB\(killedForLimit ? " (killed at a limit)" : ""), "
                + "stderr: \(standardError.debugDescription)"
        }
    }

    /// The `kiosk` executable built beside the test bundle (or `KIOSK_BIN`).
    static var kioskExecutable: URL {
        get throws {
            if let path = ProcessInfo.processInfo.environment["KIOSK_BIN"] { return URL(fileURLWithPath: path) }
            var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = folder.appendingPathComponent("kiosk")
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
                folder.deleteLastPathComponent()
            }
            throw RawHTTP.Failure(description: "the kiosk executable was not found beside the tests; set KIOSK_BIN")
        }
    }

    /// Runs `kiosk arguments…` with `input` on standard input. The child is killed (`SIGKILL`) when its resident
    /// memory passes `memoryCap` bytes or when it runs longer than `timeLimit`. With `interruptWhen`, the child gets
    /// one `SIGINT` (Ctrl-C) as soon as its standard error so far satisfies it. With `killWhen`, it gets
    /// `killSignal` (by default `SIGKILL`, `kill -9`; not counted as a limit) as soon as `killWhen` is true; both are
    /// polled every 5 ms. The child's environment is this process's with `environment` over it.
    static func runKiosk(
        _ arguments: [String], input: Data = Data(), memoryCap: Int = 1 << 30,
        timeLimit: Duration = .seconds(120), interruptWhen: (@Sendable (String) -> Bool)? = nil,
        killWhen: (@Sendable () -> Bool)? = nil, killSignal: Int32 = SIGKILL, environment: [String: String] = [:]
    ) async throws -> Outcome {
        let executable = try kioskExecutable
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(
                    with: Result {
                        try run(
                            executable, arguments, input: input, memoryCap: memoryCap, timeLimit: timeLimit,
                            interruptWhen: interruptWhen, killWhen: killWhen, killSignal: killSignal,
                            environment: environment)
                    })
            }
            thread.start()
        }
    }

    private static func run(
        _ executable: URL, _ arguments: [String], input: Data, memoryCap: Int,
        timeLimit: Duration, interruptWhen: (@Sendable (String) -> Bool)?, killWhen: (@Sendable () -> Bool)?,
        killSignal: Int32, environment: [String: String]
    ) throws -> Outcome {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let stdinURL = folder.appendingPathComponent("stdin")
        let stdoutURL = folder.appendingPathComponent("stdout")
        let stderrURL = folder.appendingPathComponent("stderr")
        try input.write(to: stdinURL)

        #if canImport(Darwin)
            var actions: posix_spawn_file_actions_t? = nil
        #else
            var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdinURL.path, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutURL.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderrURL.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        // This process's environment with `environment` over it.
        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable.path, &actions, nil, argv, envp)
        guard spawned == 0 else { throw RawHTTP.Failure(description: "posix_spawn failed: \(spawned)") }

        // Peak memory is the child's own high-water mark (VmHWM), sampled every 5 ms until it exits. Not
        // `ru_maxrss`: posix_spawn starts the child in the parent's address space, and Linux counts that one too.
        var status: Int32 = 0
        var killed = false
        var killedOnPurpose = false
        var peak = 0
        let deadline = ContinuousClock.now + timeLimit
        var interruptedAt: ContinuousClock.Instant?
        var exitedAt = ContinuousClock.now
        var polls = 0
        while true {
            let memory = memoryBytes(of: pid)
            peak = max(peak, memory.peak)
            let done = waitpid(pid, &status, WNOHANG)
            exitedAt = ContinuousClock.now
            if done == pid { break }
            polls += 1
            if let interruptWhen, interruptedAt == nil, polls % 10 == 0,
                interruptWhen((try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "")
            {
                kill(pid, SIGINT)
                interruptedAt = ContinuousClock.now
            }
            if done < 0, errno != EINTR { throw RawHTTP.Failure(description: "waitpid failed: errno \(errno)") }
            if let killWhen, !killedOnPurpose, killWhen() {
                kill(pid, killSignal)
                killedOnPurpose = true
            }
            if !killed, memory.resident > memoryCap || ContinuousClock.now > deadline {
                kill(pid, SIGKILL)
                killed = true
            }
            usleep(5_000)
        }
        let exited = status & 0x7F == 0
        return Outcome(
            exitStatus: exited ? (status >> 8) & 0xFF : nil, signal: exited ? nil : status & 0x7F,
            peakRSS: peak, killedForLimit: killed,
            standardOutput: (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "",
            standardError: (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "",
            exitAfterInterrupt: interruptedAt.map { exitedAt - $0 })
    }

    /// The child's resident memory and its high-water mark from `/proc/<pid>/status` (zeros where there is no
    /// `/proc`).
    private static func memoryBytes(of pid: pid_t) -> (resident: Int, peak: Int) {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return (0, 0) }
        func field(_ name: String) -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name) }) else { return 0 }
            return (line.split(separator: " ").compactMap { Int($0) }.first ?? 0) * 1024
        }
        return (field("VmRSS:"), field("VmHWM:"))
    }
}
