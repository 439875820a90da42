import Foundation
import KioskCore
import Testing

@testable import KioskKit

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension HostileServerTests {
    // MARK: - #27 flaw 3: no request with a token or a proof follows a redirect

    /// Which requests the front redirects to the other origin.
    enum Redirected: String, CaseIterable, Sendable {
        /// `GET /v1/subchunks/…`: the update's subchunk lists.
        case subchunkLists = "subchunk lists"
        /// The update's ranges of subchunks (the only content requests sent with `If-Range` here: none is resumed).
        case subchunkRanges = "subchunk ranges"
    }

    /// A front on a loopback port that passes every request to the real server, but answers those `redirect`
    /// picks with `307 Temporary Redirect` to the same target on `elsewhere`.
    static func redirectingFront(
        to upstream: URL, elsewhere: URL, redirect: @escaping @Sendable (HostileRequest) -> Bool
    ) throws -> HostileHTTPServer {
        try HostileHTTPServer { request in
            if redirect(request) {
                return .complete(
                    status: 307, headers: [("Location", elsewhere.absoluteString + request.target)], body: Data())
            }
            return Self.forward(request, to: upstream)
        }
    }

    /// `request` sent to `upstream` as it came (on the calling thread, which waits), and its answer as it came.
    static func forward(_ request: HostileRequest, to upstream: URL) -> HostileAnswer {
        var forwarded = URLRequest(url: URL(string: upstream.absoluteString + request.target)!)
        forwarded.httpMethod = request.method
        let hopByHop: Set<String> = ["host", "connection", "content-length", "accept-encoding"]
        for (name, value) in request.headers where !hopByHop.contains(name.lowercased()) {
            forwarded.addValue(value, forHTTPHeaderField: name)
        }
        forwarded.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if !request.body.isEmpty { forwarded.httpBody = request.body }
        let answer = Locked<HostileAnswer>(.json(502, "{}"))
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: forwarded) { data, response, _ in
            if let response = response as? HTTPURLResponse {
                let kept = ["content-type", "content-range", "etag", "retry-after", "last-modified", "cache-control"]
                let headers = response.allHeaderFields.compactMap { key, value -> (String, String)? in
                    guard let name = key as? String, let value = value as? String,
                        kept.contains(name.lowercased())
                    else { return nil }
                    return (name, value)
                }
                answer.withLock {
                    $0 = .complete(status: response.statusCode, headers: headers, body: data ?? Data())
                }
            }
            done.signal()
        }.resume()
        done.wait()
        return answer.withLock { $0 }
    }

    /// An update whose subchunk lists, or whose subchunk ranges, are redirected to another origin. Both went through
    /// `APIClient`'s URLSession, which followed the 307 and sent `Authorization: Bearer …` there, and the bytes the
    /// other origin answered were used. Now the 307 is the answer: nothing reaches the other origin, the chunks are
    /// fetched whole from the server, and 2.0 installs exactly, with either content transport.
    @Test(arguments: Redirected.allCases, [false, true])
    func anUpdatesSubchunkRequestsDoNotFollowRedirects(_ redirected: Redirected, urlSession: Bool) async throws {
        try await TestServer.with { server in
            let versions = UpdateEndToEndTests.Versions()
            let (proof, root, _, _, hashes) = try await UpdateEndToEndTests().installOldThenPublishNew(
                server, versions)
            let elsewhere = try HostileHTTPServer { _ in .json(404, "{}") }
            defer { elsewhere.stop() }
            let front = try Self.redirectingFront(to: server.baseURL, elsewhere: elsewhere.baseURL) { request in
                switch redirected {
                case .subchunkLists: request.path.hasPrefix("/v1/subchunks/")
                case .subchunkRanges:
                    request.path.hasPrefix("/v1/content/")
                        && request.headers.contains { $0.0.lowercased() == "if-range" }
                }
            }
            defer { front.stop() }

            var configuration = KioskClient.Configuration()
            configuration.retryPolicy = KioskKitTestSupport.quickRetries
            if urlSession { configuration.sessionConfiguration = .ephemeral }
            let client = try await KioskClient(serverURL: front.baseURL, cacheRoot: root, configuration: configuration)
            let content = try await client.update(productID: UpdateEndToEndTests.product, proof: proof)
            await client.close()

            #expect(content.version == "2.0")
            try Support.expectInstalled(content, hashes: hashes)
            #expect(elsewhere.requests.isEmpty, "followed to the other origin: \(elsewhere.requests)")
            let asked = front.requests.filter {
                redirected == .subchunkLists ? $0.contains("/v1/subchunks/") : $0.hasPrefix("GET /v1/content/")
            }
            #expect(!asked.isEmpty, "the update asked for no \(redirected.rawValue)")
        }
    }

    /// A grant request redirected with 307 (which keeps the method and the body: the purchase proof) is not sent
    /// again to the other origin; the download fails with the 307 as its status.
    @Test func aGrantRequestDoesNotFollowARedirect() async throws {
        try await TestServer.with { server in
            try await Support.publish(
                Self.product, version: "1.0", files: ["Contents/a.bin": Support.randomData(1000)], on: server)
            let purchase = try await server.buy(Self.product)
            let elsewhere = try HostileHTTPServer { _ in .json(404, "{}") }
            defer { elsewhere.stop() }
            let front = try Self.redirectingFront(to: server.baseURL, elsewhere: elsewhere.baseURL) { request in
                request.path == "/v1/downloads"
            }
            defer { front.stop() }
            var configuration = KioskClient.Configuration()
            configuration.retryPolicy = RetryPolicy(baseDelay: 0.05, maximumDelay: 0.5, maximumAttempts: 2)
            let client = try await KioskClient(
                serverURL: front.baseURL, cacheRoot: server.makeScratchDirectory(), configuration: configuration)
            await #expect(throws: KioskError.self) {
                _ = try await client.ensureInstalled(
                    productID: Self.product, proof: .receipt(purchase.receiptData))
            }
            await client.close()
            #expect(elsewhere.requests.isEmpty, "the proof went to the other origin: \(elsewhere.requests)")
            #expect(front.requests.contains("POST /v1/downloads"))
        }
    }
}
