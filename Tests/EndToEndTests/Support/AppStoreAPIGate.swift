import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// A stand-in for Apple's App Store Server API in front of a sandbox-mode server's own (`/sandbox/api`): it
/// answers each request with the next scripted answer, if any is left, and relays the others to the server, so a
/// test shows what Kiosk does with a 429, a 401 or a 5xx from Apple. It keeps when each request arrived and the
/// `Authorization` each carried.
final class AppStoreAPIGate: Sendable {
    /// A scripted answer: a status, its headers (computed when the request arrives, for a `Retry-After` in
    /// milliseconds since 1970) and an error body.
    struct Answer: Sendable {
        var status: Int
        var headers: @Sendable (Date) -> [(String, String)] = { _ in [] }
        var errorCode: Int? = nil
    }

    /// A request the gate saw.
    struct Seen: Sendable {
        var arrival: Date
        var path: String
        var authorization: String?
        /// Whether it was relayed (not answered from the script).
        var relayed: Bool
    }

    let port: Int
    private let task: Task<Void, any Error>
    private let state: State

    /// The base URL to give Kiosk as `--app-store-sandbox-api-url`.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/sandbox/api")! }
    /// The requests seen, in order.
    var seen: [Seen] { state.withLock { $0.seen } }

    /// What the gate's handlers and the test share.
    private final class State: Sendable {
        let mutex = Mutex<(script: [Answer], upstream: Int?, seen: [Seen])>(([], nil, []))

        func withLock<T>(_ body: (inout (script: [Answer], upstream: Int?, seen: [Seen])) -> T) -> T {
            mutex.withLock { body(&$0) }
        }
    }

    private init(port: Int, task: Task<Void, any Error>, state: State) {
        self.port = port
        self.task = task
        self.state = state
    }

    /// Sends the requests the script does not answer to the server on `port` (until then they get 503).
    func relay(to port: Int) { state.withLock { $0.upstream = port } }

    /// Answers the next requests with `answers`, in order.
    func script(_ answers: [Answer]) { state.withLock { $0.script += answers } }

    static func start() async throws -> AppStoreAPIGate {
        let state = State()
        let router = Router()
        for method in [HTTPRequest.Method.get, .post, .put] {
            router.on("/sandbox/api/**", method: method) { request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                let now = Date()
                let authorization = request.headers[.authorization]
                let (answer, upstream) = state.withLock { state in
                    let answer = state.script.isEmpty ? nil : state.script.removeFirst()
                    state.seen.append(
                        Seen(arrival: now, path: request.uri.path, authorization: authorization, relayed: answer == nil)
                    )
                    return (answer, state.upstream)
                }
                if let answer {
                    var headers = HTTPFields()
                    for (name, value) in answer.headers(now) { headers[HTTPField.Name(name)!] = value }
                    let bytes = answer.errorCode.map { Data(#"{"errorCode":\#($0),"errorMessage":"scripted"}"#.utf8) }
                    return Response(
                        status: .init(code: answer.status), headers: headers,
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes ?? Data())))
                }
                guard let upstream else { return Response(status: .serviceUnavailable) }
                var headers = [("Content-Type", "application/json")]
                if let authorization { headers.append(("Authorization", authorization)) }
                let target = request.uri.query.map { "\(request.uri.path)?\($0)" } ?? request.uri.path
                let relayed = try await RawHTTP.send(
                    port: upstream, method: method.rawValue, target: target, headers: headers,
                    body: Data(buffer: body))
                return Response(
                    status: .init(code: relayed.status), headers: [.contentType: "application/json"],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: relayed.body)))
            }
        }
        let (port, task) = try await LoopbackRouter.start(router, label: "app-store-api-gate")
        return AppStoreAPIGate(port: port, task: task, state: state)
    }

    /// Stops the gate.
    func stop() { task.cancel() }
}
