import ArgumentParser
import Foundation
import KioskKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `kiosk get URL`: one file that is not a product, with ``URLDownload``.
extension GetCommand {
    /// The exit status of a download stopped with its bytes kept, to be resumed by running again (`EX_TEMPFAIL`).
    static let resumableExitCode: Int32 = 75

    /// The argument as a URL, when it is one (`http://` or `https://`).
    var fileURL: URL? {
        let scheme = productID.prefix(8).lowercased()
        guard scheme.hasPrefix("http://") || scheme.hasPrefix("https://") else { return nil }
        return URL(string: productID)
    }

    /// Downloads `url` to `--output` (or its last path component), printing the saved path on standard output.
    func runURL(_ url: URL) async throws {
        guard receipt == nil else { throw ValidationError("--receipt is for products; a URL needs none.") }
        guard (1...1000).contains(attempts) else {
            throw ValidationError("--attempts must be between 1 and 1000 (got \(attempts)).")
        }
        guard timeout > 0, timeout.isFinite else {
            throw ValidationError("--timeout must be a positive number of seconds.")
        }
        let name = output ?? url.lastPathComponent
        guard !name.isEmpty, name != "/" else { throw ValidationError("The URL names no file: give --output.") }
        var configuration = URLDownload.Configuration()
        configuration.allowsInsecureHTTP = allowInsecureHTTP
        configuration.expectedSHA256 = sha256
        configuration.timeout = timeout
        configuration.retryPolicy.maximumAttempts = attempts
        let download: URLDownload
        do {
            download = try URLDownload(url: url, to: URL(fileURLWithPath: name), configuration: configuration)
        } catch {
            throw ValidationError(TerminalText.escaped(error.description))
        }
        let renderer = ProgressRenderer(isTerminal: isatty(STDERR_FILENO) == 1)
        let task = Task { () -> Result<URLDownload.Outcome, KioskError> in
            do throws(KioskError) {
                return .success(
                    try await download.run { progress in
                        renderer.render(bytesWritten: progress.bytesOnDisk, bytesExpected: progress.totalLength)
                    })
            } catch {
                return .failure(error)
            }
        }
        // Ctrl-C cancels the download, which keeps its bytes for the next run.
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        interrupt.setEventHandler {
            Self.interrupted.store(true, ordering: .sequentiallyConsistent)
            task.cancel()
        }
        interrupt.resume()
        let result = await task.value
        interrupt.cancel()
        let code = report(result, of: download, renderer: renderer)
        if code != 0 { throw ExitCode(code) }
    }

    /// Says how the download ended; returns the exit status.
    private func report(
        _ result: Result<URLDownload.Outcome, KioskError>, of download: URLDownload, renderer: ProgressRenderer
    ) -> Int32 {
        switch result {
        case .success(let outcome):
            renderer.complete(outcome.length)
            let check =
                switch outcome.verification {
                case .expectedSHA256: "SHA-256 \(outcome.sha256) matches --sha256"
                case .representationDigest: "SHA-256 \(outcome.sha256) matches the server's Repr-Digest"
                case .none: "not verified: the server sent no Repr-Digest (give --sha256 to check the file)"
                }
            note(check)
            print(TerminalText.escaped(outcome.file.path))
            return 0
        case .failure(let error):
            renderer.finishLine()
            let kept =
                (try? FileManager.default.attributesOfItem(atPath: download.partialFile.path)[.size] as? NSNumber)?
                .int64Value ?? 0
            if case .cancelled = error {
                note("Paused with \(ProgressRenderer.bytes(kept)) on disk. Run the same command to resume.")
                return 130
            }
            note("kiosk: \(TerminalText.escaped(error.description))")
            let resumable: Bool
            switch error {
            case .server(let status, _, _, _) where [401, 403, 410].contains(status):
                note(
                    "The URL was refused: if it was a signed URL that expired, run again with a renewed one; "
                        + "the download resumes from the \(ProgressRenderer.bytes(kept)) on disk.")
                resumable = true
            case _ where error.isTransient && kept > 0:
                note("\(ProgressRenderer.bytes(kept)) are kept: run the same command again to resume.")
                resumable = true
            case _ where error.isTransient:
                resumable = true
            default:
                resumable = false
            }
            return resumable ? Self.resumableExitCode : 1
        }
    }

    private func note(_ line: String) { FileHandle.standardError.write(Data((line + "\n").utf8)) }
}
