import Crypto
import Foundation
import KioskCore
import KioskServerTestSupport
import Testing

@testable import KioskKit

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension HostileServerTests {
    // MARK: - #27 flaw 4: error answers without end

    /// The content transports of this platform: AsyncHTTPClient's (Linux, no session configuration) and URLSession's.
    static func contentTransports(timeout: TimeInterval) -> [any SegmentTransport] {
        let fetcher = FileFetcher(timeout: timeout, maximumConnections: 2, writerFactory: .posix, environment: [:])
        let urlSession = URLSessionSegmentTransport(
            timeout: timeout, maximumConnections: 2, sessionConfiguration: nil)
        return fetcher.transport is URLSessionSegmentTransport ? [urlSession] : [fetcher.transport, urlSession]
    }

    /// Fetches `content.bin` (6 bytes) from `server` through `transport`: the error it fails with, and the body bytes
    /// the server had sent when the fetch answered. On threads of their own (``DedicatedExecutor``), so that the
    /// answer is taken when it comes, not when Swift's pool, filled by the other suites, gets to it.
    static func fetchFailure(from server: HostileHTTPServer, through transport: any SegmentTransport) async throws
        -> (error: KioskError?, sentAtAnswer: Int)
    {
        try await withTaskExecutorPreference(DedicatedExecutor.shared) {
            let folder = Self.scratch()
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let request = FetchRequest(
                url: server.baseURL.appendingPathComponent("content.bin"), token: "t", offset: 0, expectedLength: 6,
                partURL: folder.appendingPathComponent("content.bin.part"))
            do {
                _ = try await FileFetcher(transport: transport, writerFactory: .posix)
                    .fetch(request, hasher: SHA256(), progress: { _ in })
                return (nil, server.bodyBytesSent)
            } catch let error as KioskError {
                return (error, server.bodyBytesSent)
            }
        }
    }

    /// A 503 whose body never ends used to be read to its end (16 GiB in one run), the download neither moving on
    /// nor failing. Now the first 64 KiB are kept and the fetch ends there, as the 503 it is: when it ends, the
    /// server got to send what the client read plus the socket buffers, not gigabytes, and then the transfer stops.
    ///
    /// Not through URLSession on Linux: swift-corelibs-foundation goes on reading a body that does not end after
    /// the task is cancelled (179 MB in one run), and the task's end then races the session's invalidation into a
    /// trap of its own (`TaskRegistry.swift:118`, twice in full runs). KioskKit uses AsyncHTTPClient for content
    /// there unless the app gives a session configuration; URLSession's side of this case is checked on Apple
    /// platforms, and the dripping error body below checks it here.
    @Test func anEndlessErrorBodyEndsAfterItsFirst64KiB() async throws {
        #if canImport(FoundationNetworking)
            let transports = Self.contentTransports(timeout: 5).filter { !($0 is URLSessionSegmentTransport) }
        #else
            let transports = Self.contentTransports(timeout: 5)
        #endif
        #expect(!transports.isEmpty)
        for transport in transports {
            let server = try HostileHTTPServer { _ in .endlessError(status: 503) }
            defer { server.stop() }
            let (failure, atAnswer) = try await Self.fetchFailure(from: server, through: transport)
            guard case .server(let status, _, _, _)? = failure else {
                Issue.record("\(type(of: transport)): \(String(describing: failure))")
                continue
            }
            #expect(status == 503, "\(type(of: transport))")
            #expect(atAnswer < 64 << 20, "\(type(of: transport)): \(atAnswer) bytes sent")
            // The transfer stops: the server's sends settle (within a minute, on any machine).
            var last = -1
            for _ in 0..<200 where server.bodyBytesSent != last {
                last = server.bodyBytesSent
                try await Task.sleep(for: .milliseconds(300))
            }
            #expect(server.bodyBytesSent == last, "\(type(of: transport)): the transfer went on")
            transport.invalidate()
            print("endless 503 through \(type(of: transport)): \(atAnswer) bytes sent at the answer, \(last) in all")
        }
    }

    /// A 503 whose body drips a byte every 100 ms never reaches 64 KiB, and each byte comes well within the idle
    /// timeout: it used to hold the download for as long as the server kept dripping. Now the whole error answer
    /// has the idle timeout (1 s here) as its deadline, and ends as the 503 it is, on both transports.
    @Test func aDrippingErrorBodyEndsAtItsDeadline() async throws {
        for transport in Self.contentTransports(timeout: 1) {
            let server = try HostileHTTPServer { _ in
                .drippingError(status: 503, interval: .milliseconds(100), lasting: .seconds(20))
            }
            defer { server.stop() }
            let (failure, _) = try await Self.fetchFailure(from: server, through: transport)
            transport.invalidate()
            guard case .server(let status, _, _, _)? = failure else {
                Issue.record("\(type(of: transport)): \(String(describing: failure))")
                continue
            }
            #expect(status == 503, "\(type(of: transport))")
            // 20 s of drip is 200 bytes; the deadline stops it after about 10.
            #expect(server.bodyBytesSent < 100, "\(type(of: transport)): \(server.bodyBytesSent) bytes dripped")
        }
    }

    /// The download moves on after an error answer is cut: the first content request drips a 503 body, the retry
    /// gets the file, and the product installs, with either content transport.
    @Test(arguments: [false, true])
    func aDownloadRetriesAfterADrippingErrorAnswer(urlSession: Bool) async throws {
        let body = Data("kiosk!".utf8)
        let sha256 = Support.sha256(body)
        let grant = """
            {"product_id":"\(Self.product)","content_version":"1.0","total_length":6,
             "expires_at":"2099-01-01T00:00:00Z","token":"hostile-token",
             "files":[{"path":"Contents/a.bin","length":6,"sha256":"\(sha256)",
                       "url":"/v1/content/\(Self.product)/1.0/Contents/a.bin"}]}
            """
        let contentRequests = Locked(0)
        let server = try HostileHTTPServer { request in
            if request.path == "/v1/downloads" { return .json(200, grant) }
            if request.path == "/v1/deliveries" { return .json(200, #"{"status":"recorded"}"#) }
            let number = contentRequests.withLock { count -> Int in
                count += 1
                return count
            }
            guard number > 1 else {
                return .drippingError(status: 503, interval: .milliseconds(100), lasting: .seconds(20))
            }
            return .complete(status: 200, headers: [("Content-Type", "application/octet-stream")], body: body)
        }
        defer { server.stop() }
        let cache = Self.scratch()
        defer { try? FileManager.default.removeItem(at: cache) }
        var configuration = KioskClient.Configuration()
        configuration.requestTimeout = 1
        configuration.retryPolicy = RetryPolicy(baseDelay: 0.05, maximumDelay: 0.5, maximumAttempts: 3)
        if urlSession { configuration.sessionConfiguration = .ephemeral }
        let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: cache, configuration: configuration)
        let content = try await client.ensureInstalled(productID: Self.product, proof: .receipt("cmVjZWlwdA=="))
        await client.close()
        #expect(try Data(contentsOf: content.url(for: "Contents/a.bin")) == body)
        #expect(contentRequests.withLock { $0 } == 2)
        #expect(server.bodyBytesSent < 100, "\(server.bodyBytesSent) bytes dripped")
    }
}
