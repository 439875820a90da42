import NIOCore
import NIOHTTP1
import Testing

@testable import KioskServer

/// The request IDs the event loop generates: unique across connections, in the form of Hummingbird's.
@Suite("Direct answers' request IDs")
struct DirectRequestIDTests {
    static let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/healthz")

    @Test func connectionsNeverGenerateTheSameID() {
        var first = DirectRequestID.Numbers()
        var second = DirectRequestID.Numbers()
        var seen = Set<String>()
        // Past the end of a block on the first connection, with the second taking blocks in between.
        for index in 0..<(Int(DirectRequestID.blockSize) + 10) {
            let id = DirectRequestID(of: Self.request, numbers: &first).description
            #expect(seen.insert(id).inserted, "\(id) again")
            if index % 1000 == 0 {
                let other = DirectRequestID(of: Self.request, numbers: &second).description
                #expect(seen.insert(other).inserted, "\(other) again")
            }
        }
        for id in seen.prefix(100) {
            #expect((17...32).contains(id.count) && id.allSatisfy(\.isHexDigit), "\(id)")
        }
    }

    @Test func aSaneClientIDIsKeptAndWrittenAsSent() {
        var numbers = DirectRequestID.Numbers()
        var headers = HTTPHeaders()
        headers.add(name: "X-Request-ID", value: "app-launch.42")
        let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/healthz", headers: headers)
        let id = DirectRequestID(of: request, numbers: &numbers)
        var buffer = ByteBuffer()
        id.write(into: &buffer)
        #expect(String(buffer: buffer) == "app-launch.42")
        headers.replaceOrAdd(name: "X-Request-ID", value: "not sane!")
        let generated = DirectRequestID(
            of: HTTPRequestHead(version: .http1_1, method: .GET, uri: "/healthz", headers: headers), numbers: &numbers)
        #expect(generated.description != "not sane!" && generated.description.allSatisfy(\.isHexDigit))
    }
}
