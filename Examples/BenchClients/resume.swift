// resume.swift URL FILE — a careful resume loop on URLSession (`swift resume.swift URL FILE`): each answer's head is
// checked before a byte of it is written (status, Content-Range against the range asked, the file's ETag and
// Repr-Digest, no content coding, no HTML error page), the bytes are appended as they come, a file that changed
// is started over, and Repr-Digest is checked at the end where CryptoKit is (Apple platforms). Exit status: 0 saved,
// 75 stopped with the bytes kept (run again, with a renewed URL after a 401, 403 or 410, to resume), 1 failed.
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(CryptoKit)
    import CryptoKit
#endif

let url = URL(string: CommandLine.arguments[1])!
let file = URL(fileURLWithPath: CommandLine.arguments[2])
let part = URL(fileURLWithPath: file.path + ".part")
let statePath = URL(fileURLWithPath: file.path + ".part.json")

/// One request: its head is checked before a byte is written, then each piece is appended to `part` as it comes.
final class Attempt: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    var state: [String: String]  // the strong ETag, Repr-Digest and length the bytes in `part` belong to
    let have: Int
    var out: FileHandle?
    /// Why the answer was not taken (retried), or why the download must stop (`fatal`).
    var refusal: String?
    var fatal: String?
    var exitStatus: Int32 = 1
    var continuation: CheckedContinuation<Void, Error>?

    init(state: [String: String], have: Int) {
        self.state = state
        self.have = have
    }

    func run() async throws {
        var request = URLRequest(url: url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if have > 0, let tag = state["etag"], tag.hasPrefix("\"") {  // If-Range needs a strong tag
            request.setValue("bytes=\(have)-", forHTTPHeaderField: "Range")
            request.setValue(tag, forHTTPHeaderField: "If-Range")
        }
        let session = URLSession(configuration: .ephemeral, delegate: self, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        try await withCheckedThrowingContinuation { continuation in
            self.continuation = continuation
            session.dataTask(with: request).resume()
        }
    }

    /// Whether to take the answer's body, judged on its head alone.
    func take(_ http: HTTPURLResponse) throws -> Bool {
        func field(_ name: String) -> String? { http.value(forHTTPHeaderField: name) }
        switch http.statusCode {
        case 200, 206: break
        case 416: startOver(); refusal = "416"; return false
        case 408, 429, 500...599: refusal = "\(http.statusCode)"; return false
        case 401, 403, 410:  // a signed URL that expired: run again with a new one to resume
            fatal = "\(http.statusCode); the bytes are kept"
            exitStatus = 75
            return false
        default: fatal = "\(http.statusCode)"; return false
        }
        if let coding = field("Content-Encoding"), coding != "identity" {
            refusal = "a content coding that was not asked for"
            return false
        }
        if field("Content-Type")?.hasPrefix("text/html") == true, field("Repr-Digest") == nil {
            refusal = "an HTML error page instead of the file"
            return false
        }
        if http.statusCode == 206 {
            let range = (field("Content-Range") ?? "").split(whereSeparator: { " -/".contains($0) })
            guard range.count == 4, Int(range[1]) == have, Int(range[2]).map({ $0 + 1 }) == Int(range[3]) else {
                refusal = "not the range asked for"
                return false
            }
            guard field("ETag") == state["etag"], field("Repr-Digest") ?? "" == state["digest"] else {
                startOver()
                refusal = "the file changed on the server"
                return false
            }
        } else {  // 200: the whole file, whatever was on disk
            startOver()
            state = ["etag": field("ETag") ?? "", "digest": field("Repr-Digest") ?? "",
                     "length": field("Content-Length") ?? ""]
            try JSONSerialization.data(withJSONObject: state).write(to: statePath)
        }
        if !FileManager.default.fileExists(atPath: part.path) {
            FileManager.default.createFile(atPath: part.path, contents: nil)
        }
        out = try FileHandle(forWritingTo: part)
        try out?.seekToEnd()
        return true
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        do {
            completionHandler(try take(response as! HTTPURLResponse) ? .allow : .cancel)
        } catch {
            fatal = error.localizedDescription
            completionHandler(.cancel)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        out?.write(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        try? out?.close()
        let reason = fatal ?? refusal
        continuation?.resume(
            with: reason.map { .failure(URLError(.cancelled, userInfo: [NSLocalizedDescriptionKey: $0])) }
                ?? error.map { .failure($0) } ?? .success(()))
    }

    /// Follows redirects on the URL's own origin only: a resume must not move to another server half way.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        let target = request.url
        let sameOrigin = target?.scheme == url.scheme && target?.host == url.host && target?.port == url.port
        completionHandler(sameOrigin ? request : nil)
    }
}

func startOver() {
    try? FileManager.default.removeItem(at: part)
    try? FileManager.default.removeItem(at: statePath)
}

for number in 1...8 {
    if number > 1 { try await Task.sleep(nanoseconds: 1_000_000_000) }
    let saved =
        (try? Data(contentsOf: statePath)).flatMap { try? JSONSerialization.jsonObject(with: $0) } as? [String: String]
    let size = (try? FileManager.default.attributesOfItem(atPath: part.path)[.size]) as? Int
    let attempt = Attempt(state: saved ?? [:], have: saved == nil ? 0 : size ?? 0)
    do {
        try await attempt.run()
        let state = attempt.state
        let size = (try FileManager.default.attributesOfItem(atPath: part.path)[.size]) as? Int ?? 0
        guard size >= Int(state["length"] ?? "") ?? 0 else {
            throw URLError(.networkConnectionLost, userInfo: [NSLocalizedDescriptionKey: "cut after \(size) bytes"])
        }
        #if canImport(CryptoKit)  // Apple platforms: check Repr-Digest (swift-crypto does the same elsewhere)
            if let digest = state["digest"], let start = digest.range(of: "sha-256=:"),
                let expected = Data(base64Encoded: String(digest[start.upperBound...].prefix { $0 != ":" })),
                Data(SHA256.hash(data: try Data(contentsOf: part))) != expected
            {
                startOver()
                throw URLError(
                    .cannotDecodeContentData, userInfo: [NSLocalizedDescriptionKey: "not Repr-Digest's bytes"])
            }
        #endif
        _ = try? FileManager.default.removeItem(at: file)
        try FileManager.default.moveItem(at: part, to: file)
        try? FileManager.default.removeItem(at: statePath)
        exit(0)
    } catch {
        if let fatal = attempt.fatal {
            FileHandle.standardError.write(Data("refused: \(fatal)\n".utf8))
            exit(attempt.exitStatus)
        }
        if (error as? URLError)?.code == .httpTooManyRedirects {
            FileHandle.standardError.write(Data("refused: a redirect loop\n".utf8))
            exit(1)
        }
        FileHandle.standardError.write(Data("attempt \(number): \(error.localizedDescription)\n".utf8))
    }
}
FileHandle.standardError.write(Data("gave up after 8 attempts; run again to resume\n".utf8))
exit(1)
