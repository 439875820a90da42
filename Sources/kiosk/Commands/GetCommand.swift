import ArgumentParser
import Foundation
import Synchronization
import KioskCore
import KioskKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `kiosk get`: downloads a purchased product into the cache with KioskKit, or a file from a plain URL
/// (``URLDownload``, `GetCommand+URL.swift`).
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download a purchased product and print where its content was installed, or a file from a URL.",
        discussion: """
            Asks the server for a grant with the receipt (or StoreKit 2 signed transaction), downloads every file of the product's current version \
            with resumable range requests, verifies each file's SHA-256 (or, for a file the server cut into chunks, \
            each chunk's as it arrives, several chunks at once) and installs the version under \
            <cache>/Content/<product_id>/<version>/. Progress is a live bar on a terminal and plain lines \
            otherwise (on standard error), counting a chunk's bytes once it is verified; the installed path is \
            printed on standard output.

            Ctrl-C pauses the download and saves its state in the cache's journal; running the same command \
            again resumes from the bytes already on disk. When the server cannot be reached, the command says so \
            and waits, asking the server now and then whether it is back (1 s doubling up to 60 s), then goes on \
            by itself. Files purged from the cache (staged or installed) are fetched again alone.

            For a product already installed, the same command brings it to the version the server serves now: \
            files whose SHA-256 is unchanged are copied (cloned where the file system can), the chunks of \
            changed files found in the installed files are copied, and only the rest is fetched. The last line \
            then says how much was reused and how much fetched, e.g. "reused 147.3 MB, fetched 5.2 MB". The \
            installed version stays in place until the new one is installed.

            A plain http:// server must be on this machine (localhost, 127.0.0.0/8, ::1) unless \
            --allow-insecure-http is given. Text from the server (error messages) is printed with control and \
            bidirectional characters escaped.

            Examples:
              kiosk buy com.example.kiosk.magazine.2026-11 > receipt.txt
              kiosk get com.example.kiosk.magazine.2026-11 --receipt receipt.txt
              kiosk buy com.example.kiosk.book.swift-server-guide | kiosk get com.example.kiosk.book.swift-server-guide --receipt -
              kiosk buy com.example.kiosk.levels.pack1 --signed | kiosk get com.example.kiosk.levels.pack1 --receipt -
              kiosk get com.example.kiosk.levels.pack1 --receipt receipt.txt --connections 4

            Exit codes:
              0    the content is installed (its path is printed)
              3    not entitled: the receipt was refused or does not include this product
              1    any other failure (a server error that retries did not fix, integrity, disk full, bad arguments)
              130  interrupted with Ctrl-C: paused, run again to resume

            A URL instead of a product ID (kiosk get http://127.0.0.1:8081/s/cut/big.bin -o big.bin) downloads \
            one file that is not a product: no purchase, no receipt. The bytes go to FILE.kiosk-part (with what \
            is known of the file in FILE.kiosk-part.json) and are resumed from there by the next run, with Range \
            and If-Range, for the same URL (its query may change: a renewed signed URL resumes). Failures that \
            may pass are retried (the network, 408, 429, 5xx, an HTML error page sent with status 200, a 206 that \
            is not the range asked for, a body with a Content-Encoding that was not asked for); a file that \
            changed on the server during the download is started over, never stitched. The file is moved to FILE \
            only once its SHA-256 matches --sha256, or else the server's Repr-Digest (without either, its length \
            is all that is checked, and standard error says so). A redirect to another origin is refused.

              kiosk get https://cdn.example.com/levels/level-7.pak -o level-7.pak --sha256 9f86d08…

            Exit codes for a URL: 0 saved (the path is printed), 75 stopped with the bytes kept (retries used up, \
            or the URL refused with 401, 403 or 410, as a signed URL that expired: run again, with a renewed URL, \
            to resume), 1 any other failure (no wrong file is left at FILE), 130 interrupted with Ctrl-C.
            """
    )

    @Argument(
        help: "The product to download, e.g. com.example.kiosk.magazine.2026-11, or an http(s):// URL of a file.")
    var productID: String

    @Option(
        help: ArgumentHelp(
            "A file holding the base64 receipt or a signed transaction (JWS), or - for standard input (products only).",
            valueName: "file"))
    var receipt: String?

    @Option(
        name: [.short, .customLong("output")],
        help: ArgumentHelp("Where to save a URL's file (default: the URL's last path component, here).", valueName: "file"))
    var output: String?

    @Option(help: ArgumentHelp("The SHA-256 a URL's file must have (hex), checked instead of the server's Repr-Digest.",
                               valueName: "hex"))
    var sha256: String?

    @Option(help: ArgumentHelp("For a URL: the idle timeout of a request, in seconds.", valueName: "seconds"))
    var timeout: Double = 60

    @Option(
        help: ArgumentHelp(
            "For a URL: how many failures in a row end the download (bytes written start the count over).",
            valueName: "n"))
    var attempts: Int = 8

    @Option(help: "The Kiosk server.")
    var server: String = KioskClient.defaultServerURL.absoluteString

    @Option(help: ArgumentHelp("The cache root (default: $XDG_CACHE_HOME/kiosk or ~/.cache/kiosk).", valueName: "dir"))
    var cache: String?

    @Option(help: ArgumentHelp("The most connections to the server at once: a product of many small files is fetched this many files at a time.",
                               valueName: "n"))
    var connections: Int = 8

    @Option(name: .customLong("connections-per-file"),
            help: ArgumentHelp("The most range requests of one file at once, for a file the server cut into chunks (within --connections).",
                               valueName: "n"))
    var connectionsPerFile: Int = 4

    @Flag(name: .customLong("no-packs"),
          help: "Fetch every file with a request of its own, never runs of small files from the product's pack.")
    var noPacks = false

    @Flag(name: .customLong("allow-insecure-http"),
          help: "Allow a plain http:// server that is not on this machine (receipts and tokens cross the network unencrypted).")
    var allowInsecureHTTP = false

    func run() async throws {
        if let url = fileURL {
            try await runURL(url)
            return
        }
        guard output == nil, sha256 == nil else {
            throw ValidationError("--output and --sha256 are for a URL; a product is installed in the cache.")
        }
        guard let receipt else { throw ValidationError("A product needs --receipt (or a URL instead of a product ID).") }
        guard let serverURL = URL(string: server), serverURL.scheme != nil else {
            throw ValidationError("'\(server)' is not a URL.")
        }
        guard (1...64).contains(connections) else {
            throw ValidationError("--connections must be between 1 and 64 (got \(connections)).")
        }
        guard (1...64).contains(connectionsPerFile) else {
            throw ValidationError("--connections-per-file must be between 1 and 64 (got \(connectionsPerFile)).")
        }
        let proof = try readProof(receipt)
        let root = cache.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? CacheLayout.defaultRoot
        var configuration = KioskClient.Configuration()
        configuration.allowsInsecureHTTP = allowInsecureHTTP
        configuration.maximumConnections = connections
        configuration.maxConnectionsPerFile = connectionsPerFile
        configuration.usesPacks = !noPacks
        let client = try await KioskClient(serverURL: serverURL, cacheRoot: root, configuration: configuration)
        let renderer = ProgressRenderer(isTerminal: isatty(STDERR_FILENO) == 1)
        let product = productID

        // Ctrl-C: pause, say where, exit 130 within a second. The journal keeps the download for the next run.
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        interrupt.setEventHandler {
            Self.interrupted.store(true, ordering: .sequentiallyConsistent)
            Task {
                try? await client.pause(product)
                let progress = await client.download(for: product)?.progress
                renderer.finishLine()
                FileHandle.standardError.write(Data((Self.pausedLine(progress) + "\n").utf8))
                // Closing makes the journal durable; a transfer slow to wind down must not hold the exit.
                Task.detached {
                    await client.close()
                    Self.exitOnce(130)
                }
                try? await Task.sleep(for: .milliseconds(800))
                Self.exitOnce(130)
            }
        }
        interrupt.resume()

        let events = client.events
        let code: Int32
        do {
            try await client.enqueue(productID: productID, proof: proof, priority: .high)
            code = await follow(events, client: client, renderer: renderer)
        } catch {
            code = report(error, renderer: renderer)
        }
        interrupt.cancel()
        if Self.interrupted.load(ordering: .sequentiallyConsistent) {
            // Ctrl-C ended the download: the interrupt handler exits with 130 (this is only a backstop).
            try? await Task.sleep(for: .seconds(2))
            Self.exitOnce(130)
        }
        // A failed download's state is already in the journal. Closing would wait for URLSession to wind down the
        // failed request, which on Linux can take seconds against a server that keeps sending.
        if code != 0 { throw ExitCode(code) }
        await client.close()
    }

    /// What Ctrl-C prints: `Paused at 42 % (12.3 MB of 29.1 MB). Run the same command to resume.`
    static func pausedLine(_ progress: DownloadProgress?) -> String {
        guard let progress, progress.bytesExpected > 0 else { return "Paused. Run the same command to resume." }
        let percent = Int((progress.fraction * 100).rounded(.down))
        return "Paused at \(percent) % (\(ProgressRenderer.bytes(progress.bytesWritten)) of "
            + "\(ProgressRenderer.bytes(progress.bytesExpected))). Run the same command to resume."
    }

    /// Whether Ctrl-C was pressed.
    static let interrupted = Atomic<Bool>(false)

    /// Whether the process is already on its way out.
    private static let exiting = Atomic<Bool>(false)

    /// Exits with `code`, once: the interrupt handler's two paths to the exit may both get there.
    static func exitOnce(_ code: Int32) {
        guard !exiting.exchange(true, ordering: .sequentiallyConsistent) else { return }
        Foundation.exit(code)
    }

    /// The proof in the file: a compact JWS (three base64url parts) is a signed transaction, anything else a receipt.
    private func readProof(_ receipt: String) throws -> PurchaseProof {
        let data: Data
        if receipt == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: receipt) else {
                throw ValidationError("Cannot read the receipt file '\(receipt)'.")
            }
            data = contents
        }
        var text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        // Accept the JSON the sandbox store answers, too.
        if text.hasPrefix("{"), let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
           let value = object["receipt-data"] as? String {
            text = value
        }
        guard !text.isEmpty else { throw ValidationError("The receipt is empty.") }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        let isJWS = parts.count == 3 && parts.allSatisfy { part in
            !part.isEmpty && part.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_")
            }
        }
        return isJWS ? .signedTransaction(text) : .receipt(text)
    }

    /// Follows the product's events until it is installed, fails or stops; returns the exit code.
    private func follow(_ events: AsyncStream<KioskEvent>, client: KioskClient, renderer: ProgressRenderer) async -> Int32 {
        if let snapshot = await client.download(for: productID) { renderer.render(snapshot) }
        for await event in events {
            switch event {
            case .progress(let snapshot) where snapshot.productID == productID:
                renderer.render(snapshot)
            case .stateChanged(let snapshot) where snapshot.productID == productID:
                switch snapshot.state {
                case .failed(let error):
                    return report(error, renderer: renderer)
                case .paused(.insufficientStorage):
                    renderer.finishLine()
                    let reason = snapshot.error?.description ?? "Not enough free space."
                    FileHandle.standardError.write(Data(
                        "kiosk: \(reason) The download is paused with its bytes kept. Free some space and run again.\n".utf8))
                    return 1
                case .cancelled:
                    renderer.finishLine()
                    return 1
                case .waitingToRetry(let until, let attempt):
                    renderer.note(String(format: "retrying in %.0f s (attempt %d)", max(0, until.timeIntervalSinceNow), attempt))
                case .waitingForNetwork:
                    renderer.note("the server cannot be reached: waiting for the network (Ctrl-C pauses)")
                default:
                    renderer.render(snapshot)
                }
            case .installed(let content) where content.productID == productID:
                renderer.complete(content.totalLength, progress: await client.download(for: productID)?.progress)
                print(TerminalText.escaped(content.directory.path))
                return 0
            default:
                break
            }
        }
        return 1
    }

    private func report(_ error: KioskError, renderer: ProgressRenderer) -> Int32 {
        renderer.finishLine()
        FileHandle.standardError.write(Data("kiosk: \(TerminalText.escaped(error.description))\n".utf8))
        return error.isEntitlementRefusal ? 3 : 1
    }
}

/// Draws download progress on standard error: a redrawn bar on a terminal, a line every second otherwise.
final class ProgressRenderer: Sendable {
    let isTerminal: Bool
    private let state = LockedState()

    init(isTerminal: Bool) { self.isTerminal = isTerminal }

    func render(_ snapshot: DownloadSnapshot) {
        let progress = snapshot.progress
        guard progress.bytesExpected > 0 else { return }
        let now = Date()
        let line = Self.describe(progress, state: snapshot.state)
        if isTerminal {
            guard state.shouldDraw(now: now, interval: 0.1) else { return }
            let width = 24
            let filled = Int((progress.fraction * Double(width)).rounded(.down))
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            write("\r\u{1B}[2K[\(bar)] \(line)")
            state.setDirty(true)
        } else {
            guard state.shouldDraw(now: now, interval: 1) else { return }
            write("\(line)\n")
        }
    }

    /// Draws the progress of a download that knows only its bytes (`bytesExpected` nil until the server said).
    func render(bytesWritten: Int64, bytesExpected: Int64?) {
        guard state.shouldDraw(now: Date(), interval: isTerminal ? 0.1 : 1) else { return }
        var line = Self.bytes(bytesWritten)
        if let bytesExpected, bytesExpected > 0 {
            let percent = Double(bytesWritten) / Double(bytesExpected) * 100
            line = String(format: "%3.0f%%  ", percent) + line + " / " + Self.bytes(bytesExpected)
        }
        if isTerminal {
            write("\r\u{1B}[2K\(line)")
            state.setDirty(true)
        } else {
            write("\(line)\n")
        }
    }

    func note(_ text: String) {
        finishLine()
        write("\(text)\n")
    }

    /// Draws the last line; for an update that reused bytes of the installed version, with what was reused and
    /// what was fetched, e.g. `100%  152.5 MB  done (reused 147.3 MB, fetched 5.2 MB)`.
    func complete(_ total: Int64, progress: DownloadProgress? = nil) {
        var line = "100%  \(Self.bytes(total))  done"
        if let progress, progress.bytesReused > 0 { line += " (\(Self.reuse(progress)))" }
        if isTerminal {
            write("\r\u{1B}[2K[\(String(repeating: "#", count: 24))] \(line)\n")
            state.setDirty(false)
        } else {
            write("\(line)\n")
        }
    }

    /// `reused 147.3 MB, fetched 5.2 MB`.
    static func reuse(_ progress: DownloadProgress) -> String {
        "reused \(bytes(progress.bytesReused)), fetched \(bytes(progress.bytesFetched))"
    }

    func finishLine() {
        if isTerminal, state.setDirty(false) { write("\n") }
    }

    static func describe(_ progress: DownloadProgress, state: DownloadState) -> String {
        var parts = [String(format: "%3.0f%%", progress.fraction * 100),
                     "\(bytes(progress.bytesWritten)) / \(bytes(progress.bytesExpected))"]
        if progress.bytesPerSecond > 0 { parts.append("\(bytes(Int64(progress.bytesPerSecond)))/s") }
        if let left = progress.timeRemaining {
            parts.append("\(duration(left)) left")
        } else if case .active = state {
            parts.append("--:-- left")
        } else {
            parts.append(state.name)
        }
        return parts.joined(separator: "  ")
    }

    static func bytes(_ count: Int64) -> String { ByteCountText.file(count) }

    static func duration(_ value: Duration) -> String {
        let seconds = Int(value.components.seconds)
        if seconds >= 3600 { return String(format: "%d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60) }
        return String(format: "%d:%02d", seconds / 60, seconds % 60)
    }

    private func write(_ text: String) { FileHandle.standardError.write(Data(text.utf8)) }
}

/// The renderer's little mutable state. `@unchecked Sendable`: every access holds `lock`.
private final class LockedState: @unchecked Sendable {
    private let lock = NSLock()
    private var lastDraw = Date.distantPast
    private var dirty = false

    func shouldDraw(now: Date, interval: TimeInterval) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard now.timeIntervalSince(lastDraw) >= interval else { return false }
        lastDraw = now
        return true
    }

    /// Sets the flag and returns its previous value.
    @discardableResult
    func setDirty(_ value: Bool) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let old = dirty
        dirty = value
        return old
    }
}
