import Foundation
import Hummingbird
import NIOConcurrencyHelpers

/// A stand-in for Apple's `verifyReceipt` endpoints: a small HTTP server whose answer depends on the scenario
/// written in the receipt (`base64("scenario:<name>")`) and on which endpoint was called.
final class FakeAppStore: Sendable {
    let port: Int
    private let task: Task<Void, any Error>
    private let calls: NIOLockedValueBox<[String]>

    /// `http://127.0.0.1:<port>/verifyReceipt` (production).
    var productionURL: URL { URL(string: "http://127.0.0.1:\(port)/verifyReceipt")! }
    /// `http://127.0.0.1:<port>/sandbox/verifyReceipt`.
    var sandboxURL: URL { URL(string: "http://127.0.0.1:\(port)/sandbox/verifyReceipt")! }
    /// The endpoints called so far, in order (`production` / `sandbox`), with the password each carried.
    var callLog: [String] { calls.withLockedValue { $0 } }

    /// A receipt for a scenario.
    static func receipt(_ scenario: String) -> String { Data("scenario:\(scenario)".utf8).base64EncodedString() }

    private init(port: Int, task: Task<Void, any Error>, calls: NIOLockedValueBox<[String]>) {
        self.port = port
        self.task = task
        self.calls = calls
    }

    static func start(bundleID: String, productID: String) async throws -> FakeAppStore {
        let calls = NIOLockedValueBox<[String]>([])
        let router = Router()
        for (path, environment) in [("/verifyReceipt", "production"), ("/sandbox/verifyReceipt", "sandbox")] {
            router.post(RouterPath(path)) { request, _ -> Response in
                let body = try await request.body.collect(upTo: 4 << 20)
                let json = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] ?? [:]
                let password = json["password"] as? String ?? "-"
                calls.withLockedValue { $0.append("\(environment):\(password)") }
                let receipt = (json["receipt-data"] as? String).flatMap { Data(base64Encoded: $0) }
                let scenario =
                    receipt.map { String(decoding: $0, as: UTF8.self) }?
                    .replacingOccurrences(of: "scenario:", with: "") ?? "?"
                return answer(scenario: scenario, environment: environment, bundleID: bundleID, productID: productID)
            }
        }
        let (port, task) = try await LoopbackRouter.start(router, label: "fake-app-store")
        return FakeAppStore(port: port, task: task, calls: calls)
    }

    /// Runs `body` against a fresh fake store and stops it afterwards.
    static func with<T>(bundleID: String, productID: String, _ body: (FakeAppStore) async throws -> T) async throws -> T
    {
        let store = try await start(bundleID: bundleID, productID: productID)
        do {
            let result = try await body(store)
            await store.stop()
            return result
        } catch {
            await store.stop()
            throw error
        }
    }

    func stop() async {
        task.cancel()
        _ = try? await task.value
    }

    private static func json(_ object: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    private static func appReceipt(bundleID: String, productID: String, environment: String) -> [String: Any] {
        let now = Int(Date().timeIntervalSince1970 * 1000)
        return [
            "status": 0, "environment": environment == "sandbox" ? "Sandbox" : "Production",
            "receipt": [
                "receipt_type": "Production", "bundle_id": bundleID, "application_version": "7",
                "in_app": [
                    [
                        "quantity": "1", "product_id": productID, "transaction_id": "1000000111",
                        "original_transaction_id": "1000000111", "purchase_date_ms": String(now - 60_000),
                        "purchase_date": "2026-11-22 10:00:00 Etc/GMT",
                    ]
                ],
            ],
        ]
    }

    private static func answer(scenario: String, environment: String, bundleID: String, productID: String) -> Response {
        switch scenario {
        case "ok":
            return json(appReceipt(bundleID: bundleID, productID: productID, environment: environment))
        case "sandbox-receipt":
            return environment == "production"
                ? json(["status": 21007])
                : json(appReceipt(bundleID: bundleID, productID: productID, environment: environment))
        case "other-bundle":
            return json(appReceipt(bundleID: "com.other.app", productID: productID, environment: environment))
        case "ios6":
            let now = Int(Date().timeIntervalSince1970 * 1000)
            return json([
                "status": 0,
                "receipt": [
                    "bid": bundleID, "bvrs": "1.0", "product_id": productID, "transaction_id": "170000000000001",
                    "original_transaction_id": "170000000000001", "purchase_date_ms": String(now - 1000),
                    "quantity": "1",
                    "item_id": "521129812",
                ],
            ])
        case "refunded":
            var body = appReceipt(bundleID: bundleID, productID: productID, environment: environment)
            var receipt = body["receipt"] as! [String: Any]
            var transaction = (receipt["in_app"] as! [[String: Any]])[0]
            transaction["cancellation_date_ms"] = String(Int(Date().timeIntervalSince1970 * 1000))
            receipt["in_app"] = [transaction]
            body["receipt"] = receipt
            return json(body)
        case "retryable":
            return json(["status": 21005, "is-retryable": true])
        case "http500":
            return json(["error": "boom"], status: .internalServerError)
        case _ where scenario.hasPrefix("redirect-"):
            // `redirect-<port>`: a 307 to another listener, which a store client must not follow with the receipt.
            return Response(
                status: .temporaryRedirect,
                headers: [.location: "http://127.0.0.1:\(scenario.dropFirst(9))/verifyReceipt"])
        default:
            if scenario.hasPrefix("status-"), let status = Int(scenario.dropFirst(7)) {
                return json(["status": status])
            }
            return json(["status": 21002])
        }
    }
}

extension Data {
    fileprivate init(buffer: ByteBuffer) { self = Data(buffer.readableBytesView) }
}
