import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real nginx in front of a Kiosk server started with `--offload nginx:/_kiosk/files`, configured by the
/// repository's own `deploy/nginx/kiosk-offload.conf` with only its placeholders replaced, so that the shipped
/// configuration is the tested one. nginx runs in the foreground as a child of the test process (`daemon off`,
/// `master_process off`), on a free port of 127.0.0.1, with its pid, error log and temporary files in a folder of
/// its own. As a ``LoopbackKioskServer``, what a test sends it goes through nginx to Kiosk.
final class NginxOffloadProxy: LoopbackKioskServer {
    /// The prefix of `deploy/nginx/kiosk-offload.conf`'s internal locations, for ``ServerConfiguration/offload``.
    static let prefix = "/_kiosk/files"

    /// The nginx binary: `KIOSK_TEST_NGINX` (`.ci/nginx.sh` sets it), else Debian's `/usr/sbin/nginx` when present.
    static var executable: String? {
        if let path = ProcessInfo.processInfo.environment["KIOSK_TEST_NGINX"], !path.isEmpty { return path }
        return FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") ? "/usr/sbin/nginx" : nil
    }

    /// Whether the nginx tests can run.
    static var isAvailable: Bool { executable.map { FileManager.default.isExecutableFile(atPath: $0) } ?? false }

    /// Why the nginx tests are skipped when ``isAvailable`` is false.
    static let unavailableReason: Comment =
        "nginx not found: install it (apt-get install nginx-light) or set KIOSK_TEST_NGINX (.ci/nginx.sh does)"

    /// The shipped configuration.
    static let shippedConfiguration = TestServer.sampleContent.deletingLastPathComponent()
        .appendingPathComponent("deploy/nginx/kiosk-offload.conf")

    /// How long nginx may take to accept connections, and to exit once told to.
    static let deadline: Duration = .seconds(15)

    /// The port nginx listens on, on 127.0.0.1.
    let port: Int
    private let process: Process
    private let root: URL

    private init(port: Int, process: Process, root: URL) {
        self.port = port
        self.process = process
        self.root = root
    }

    /// Starts nginx in front of Kiosk on `kioskPort`, sending files from `contentDirectory`.
    static func start(kioskPort: Int, contentDirectory: URL) async throws -> NginxOffloadProxy {
        guard let executable else { throw RawHTTP.Failure(description: "\(unavailableReason)") }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("temp"), withIntermediateDirectories: true)
        // A port another process may take before nginx binds it: nginx then exits, and the next attempt takes
        // another.
        var failures: [String] = []
        for _ in 0..<3 {
            let (fd, port) = try RawHTTP.listenOnLoopback()
            close(fd)
            try writeConfiguration(in: root, port: port, kioskPort: kioskPort, content: contentDirectory)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = [
                "-p", root.path, "-c", root.appendingPathComponent("nginx.conf").path,
                "-e", root.appendingPathComponent("error.log").path,
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let proxy = NginxOffloadProxy(port: port, process: process, root: root)
            if try await proxy.waitUntilAccepting() { return proxy }
            failures.append(proxy.errorLog)
            await proxy.stopProcess()
        }
        try? FileManager.default.removeItem(at: root)
        throw RawHTTP.Failure(description: "nginx did not start: \(failures.joined(separator: "\n"))")
    }

    /// Runs `body` against nginx in front of Kiosk on `kioskPort`, then stops nginx, whether `body` returns or
    /// throws.
    static func with<T>(
        kioskPort: Int, contentDirectory: URL, _ body: (NginxOffloadProxy) async throws -> T
    ) async throws -> T {
        let proxy = try await start(kioskPort: kioskPort, contentDirectory: contentDirectory)
        do {
            let result = try await body(proxy)
            await proxy.stop()
            return result
        } catch {
            await proxy.stop()
            throw error
        }
    }

    /// `nginx.conf`: the process settings a test needs around the shipped file, which goes in as it is but for
    /// its three placeholders.
    private static func writeConfiguration(in root: URL, port: Int, kioskPort: Int, content: URL) throws {
        let shipped = try String(contentsOf: shippedConfiguration, encoding: .utf8)
            .replacingOccurrences(of: "@LISTEN@", with: "127.0.0.1:\(port)")
            .replacingOccurrences(of: "@KIOSK@", with: "127.0.0.1:\(kioskPort)")
            .replacingOccurrences(of: "@CONTENT@", with: content.resolvingSymlinksInPath().path)
        try shipped.write(to: root.appendingPathComponent("kiosk-offload.conf"), atomically: true, encoding: .utf8)
        let temp = root.appendingPathComponent("temp").path
        let main = """
            daemon off;
            master_process off;
            pid \(root.appendingPathComponent("nginx.pid").path);
            error_log \(root.appendingPathComponent("error.log").path) notice;
            events { worker_connections 512; }
            http {
                access_log off;
                default_type application/octet-stream;
                client_body_temp_path \(temp)/body;
                proxy_temp_path \(temp)/proxy;
                fastcgi_temp_path \(temp)/fastcgi;
                uwsgi_temp_path \(temp)/uwsgi;
                scgi_temp_path \(temp)/scgi;
                include \(root.appendingPathComponent("kiosk-offload.conf").path);
            }

            """
        try main.write(to: root.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
    }

    /// Polls the port every 10 ms until nginx accepts a connection (true) or exits or ``deadline`` passes (false).
    private func waitUntilAccepting() async throws -> Bool {
        let (process, port) = (self.process, self.port)
        return try await RawHTTP.onThread {
            let deadline = ContinuousClock.now + Self.deadline
            while process.isRunning, ContinuousClock.now < deadline {
                let fd = RawHTTP.makeTCPSocket()
                defer { close(fd) }
                if fd >= 0, RawHTTP.connectToLoopback(fd, port: port) { return true }
                usleep(10_000)
            }
            return false
        }
    }

    /// nginx's error log so far (startup failures, and what nginx logs at `notice`; no request or token).
    var errorLog: String {
        (try? String(contentsOf: root.appendingPathComponent("error.log"), encoding: .utf8)) ?? "(no error log)"
    }

    /// Stops nginx (`SIGTERM`, `SIGKILL` after ``deadline``) and removes its folder.
    func stop() async {
        await stopProcess()
        try? FileManager.default.removeItem(at: root)
    }

    private func stopProcess() async {
        let process = self.process
        _ = try? await RawHTTP.onThread {
            if process.isRunning { process.terminate() }
            let deadline = ContinuousClock.now + Self.deadline
            while process.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }
}
