import Foundation
import KioskCore
import Testing

/// RFC 9110 §13 conditional requests on content, over the wire: `If-Match`, `If-None-Match`, `If-Modified-Since`
/// and `If-Unmodified-Since`, evaluated in the §13.2.2 order before `Range` and `If-Range`, for GET and HEAD.
@Suite("Server: conditional requests on content")
struct ServerConditionalRequestTests {
    /// What a case expects: the full answer (200, or 206 for a GET with a Range), 304 or 412.
    enum Outcome: Sendable, CustomStringConvertible {
        case served
        case notModified
        case preconditionFailed

        var description: String {
            switch self {
            case .served: "served"
            case .notModified: "304"
            case .preconditionFailed: "412"
            }
        }
    }

    /// The validators of the file being asked for, as a 200 sends them.
    struct Validators {
        /// The strong `ETag`, quoted.
        var eTag: String
        /// `Last-Modified`, as sent.
        var lastModified: String
        /// `Last-Modified` moved by `seconds`, as an IMF-fixdate.
        func lastModified(plus seconds: TimeInterval) -> String {
            HTTPDate.format(HTTPDate.parse(lastModified)!.addingTimeInterval(seconds))
        }
        /// The opaque tag inside `eTag`.
        var opaque: String { String(eTag.dropFirst().dropLast()) }
    }

    /// One request's conditional headers and the outcome RFC 9110 §13.2.2 prescribes.
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var headers: @Sendable (Validators) -> [(String, String)]
        var outcome: Outcome
        var description: String { name }
    }

    static let cases: [Case] = [
        // If-None-Match: weak comparison, *, lists.
        Case(name: "INM current", headers: { [("If-None-Match", $0.eTag)] }, outcome: .notModified),
        Case(name: "INM weak form", headers: { [("If-None-Match", "W/\($0.eTag)")] }, outcome: .notModified),
        Case(name: "INM *", headers: { _ in [("If-None-Match", "*")] }, outcome: .notModified),
        Case(
            name: "INM list", headers: { [("If-None-Match", "\"0000\", W/\"1111\" ,\($0.eTag)")] },
            outcome: .notModified),
        Case(
            name: "INM two fields", headers: { [("If-None-Match", "\"0000\""), ("If-None-Match", $0.eTag)] },
            outcome: .notModified),
        Case(name: "INM other", headers: { _ in [("If-None-Match", "\"0000\", W/\"1111\"")] }, outcome: .served),
        Case(name: "INM malformed", headers: { [("If-None-Match", $0.opaque)] }, outcome: .served),
        // If-Modified-Since: only without If-None-Match and with a valid date.
        Case(name: "IMS = LM", headers: { [("If-Modified-Since", $0.lastModified)] }, outcome: .notModified),
        Case(
            name: "IMS after LM", headers: { [("If-Modified-Since", $0.lastModified(plus: 60))] }, outcome: .notModified
        ),
        Case(name: "IMS before LM", headers: { [("If-Modified-Since", $0.lastModified(plus: -1))] }, outcome: .served),
        Case(name: "IMS invalid", headers: { _ in [("If-Modified-Since", "yesterday")] }, outcome: .served),
        Case(
            name: "IMS two dates",
            headers: { [("If-Modified-Since", $0.lastModified), ("If-Modified-Since", $0.lastModified)] },
            outcome: .served),
        Case(
            name: "IMS = LM ignored beside a non-matching INM",
            headers: { [("If-None-Match", "\"0000\""), ("If-Modified-Since", $0.lastModified)] }, outcome: .served),
        Case(
            name: "IMS before LM ignored beside a matching INM",
            headers: { [("If-None-Match", $0.eTag), ("If-Modified-Since", $0.lastModified(plus: -86_400))] },
            outcome: .notModified),
        // If-Match: strong comparison, *, lists.
        Case(name: "IM current", headers: { [("If-Match", $0.eTag)] }, outcome: .served),
        Case(name: "IM *", headers: { _ in [("If-Match", "*")] }, outcome: .served),
        Case(name: "IM list", headers: { [("If-Match", "\"0000\", \($0.eTag)")] }, outcome: .served),
        Case(name: "IM wrong", headers: { _ in [("If-Match", "\"0000\"")] }, outcome: .preconditionFailed),
        Case(name: "IM weak form", headers: { [("If-Match", "W/\($0.eTag)")] }, outcome: .preconditionFailed),
        Case(name: "IM malformed", headers: { [("If-Match", $0.opaque)] }, outcome: .preconditionFailed),
        // If-Unmodified-Since: only without If-Match and with a valid date.
        Case(
            name: "IUS past", headers: { [("If-Unmodified-Since", $0.lastModified(plus: -1))] },
            outcome: .preconditionFailed),
        Case(name: "IUS = LM", headers: { [("If-Unmodified-Since", $0.lastModified)] }, outcome: .served),
        Case(name: "IUS future", headers: { [("If-Unmodified-Since", $0.lastModified(plus: 3600))] }, outcome: .served),
        Case(name: "IUS invalid", headers: { _ in [("If-Unmodified-Since", "not a date")] }, outcome: .served),
        Case(
            name: "IUS past ignored beside a matching IM",
            headers: { [("If-Match", $0.eTag), ("If-Unmodified-Since", $0.lastModified(plus: -86_400))] },
            outcome: .served),
        // The §13.2.2 order: If-Match / If-Unmodified-Since before If-None-Match / If-Modified-Since.
        Case(
            name: "IM wrong before a matching INM",
            headers: { [("If-Match", "\"0000\""), ("If-None-Match", $0.eTag)] }, outcome: .preconditionFailed),
        Case(
            name: "IUS past before IMS = LM",
            headers: { [("If-Unmodified-Since", $0.lastModified(plus: -1)), ("If-Modified-Since", $0.lastModified)] },
            outcome: .preconditionFailed),
        Case(
            name: "IM current then a matching INM",
            headers: { [("If-Match", $0.eTag), ("If-None-Match", $0.eTag)] }, outcome: .notModified),
        // Preconditions come before If-Range (§13.2.2 step 5).
        Case(
            name: "INM current with a matching If-Range",
            headers: { [("If-None-Match", $0.eTag), ("If-Range", $0.eTag)] }, outcome: .notModified),
        Case(
            name: "IM wrong with a matching If-Range",
            headers: { [("If-Match", "\"0000\""), ("If-Range", $0.eTag)] }, outcome: .preconditionFailed),
        Case(
            name: "IM current with a matching If-Range",
            headers: { [("If-Match", $0.eTag), ("If-Range", $0.eTag)] }, outcome: .served),
    ]

    /// The four ways of asking: GET and HEAD, each without and with a `Range`.
    static let requests: [(method: String, range: String?)] = [
        ("GET", nil), ("GET", "bytes=0-9"), ("HEAD", nil), ("HEAD", "bytes=0-9"),
    ]

    /// The headers a 304 repeats from the 200 (RFC 9110 §15.4.5, and the ones a cache updates from).
    static let repeatedHeaders = ["ETag", "Last-Modified", "Cache-Control", "Repr-Digest", "Accept-Ranges"]

    @Test("every precondition case", arguments: requests)
    func everyCase(method: String, range: String?) async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(TestServer.Sample.book)
            let grant = try await server.grant(TestServer.Sample.book, receipt: purchase.receiptData)
            let file = try #require(grant.files.first)
            let auth = ("Authorization", "Bearer \(grant.token)")
            let plain = try await server.send("GET", file.url, headers: [auth])
            #expect(plain.status == 200)
            let validators = Validators(
                eTag: try #require(plain.header("ETag")), lastModified: try #require(plain.header("Last-Modified")))
            let rangeHeader = range.map { [("Range", $0)] } ?? []

            for testCase in Self.cases {
                let label = "\(method) \(range ?? "whole") \(testCase.name)"
                let response = try await server.send(
                    method, file.url, headers: [auth] + rangeHeader + testCase.headers(validators))
                switch testCase.outcome {
                case .served:
                    let partial = method == "GET" && range != nil
                    #expect(response.status == (partial ? 206 : 200), "\(label)")
                    if method == "GET" {
                        #expect(response.body == (partial ? plain.body.prefix(10) : plain.body), "\(label)")
                    }
                case .notModified:
                    #expect(response.status == 304, "\(label)")
                    for name in Self.repeatedHeaders {
                        #expect(response.header(name) == plain.header(name), "\(label) \(name)")
                    }
                    #expect(response.header("Content-Range") == nil, "\(label)")
                    #expect(response.header("Content-Length") == nil, "\(label)")
                    #expect(response.header("Transfer-Encoding") == nil, "\(label)")
                    #expect(response.body.isEmpty, "\(label)")
                case .preconditionFailed:
                    #expect(response.status == 412, "\(label)")
                    #expect(response.header("Content-Range") == nil, "\(label)")
                    if method == "GET" {
                        let envelope = try? KioskJSON.decode(APIErrorEnvelope.self, from: response.body)
                        #expect(envelope?.error.code == "precondition_failed", "\(label)")
                    }
                }
            }
        }
    }
}
