import AsyncHTTPClient
import Foundation
import KioskServer
import Testing

/// `kiosk content push` as an operator runs it, against moto_server (`KIOSK_TEST_S3_ENDPOINT`, `.ci/moto.sh`): the
/// credentials from the environment only, what it prints, and its exit status.
@Suite("kiosk content push")
struct ContentPushCommandTests {
    static let endpoint = ProcessInfo.processInfo.environment["KIOSK_TEST_S3_ENDPOINT"]
    static let credentials = ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "moto-checks-no-signature"]

    /// Creates a fresh bucket on the emulator and returns its name.
    static func freshBucket() async throws -> String {
        let bucket = "kiosk-cli-" + UUID().uuidString.lowercased().prefix(8)
        let signer = SigV4Signer(
            location: try S3Location(
                endpoint: try #require(endpoint.flatMap(URL.init(string:))), region: "us-east-1", bucket: bucket),
            credentials: S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "x"))
        let signed = try signer.signedRequest(method: .put, key: nil, payload: .unsigned, at: Date())
        var request = HTTPClientRequest(url: signed.url.absoluteString)
        request.method = .PUT
        for field in signed.headerFields { request.headers.add(name: field.name.rawName, value: field.value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        #expect(response.status.code == 200, "CreateBucket")
        return bucket
    }

    @Test(.enabled(if: endpoint != nil, "KIOSK_TEST_S3_ENDPOINT not set: needs moto_server (.ci/moto.sh)"))
    func pushesTheSampleCatalogThenOnlyWhatChanged() async throws {
        let bucket = try await Self.freshBucket()
        let command = [
            "content", "push", TestServer.sampleContent.path, "--endpoint", try #require(Self.endpoint),
            "--bucket", bucket, "--prefix", "content",
        ]
        let first = try await ChildProcess.runKiosk(command, environment: Self.credentials)
        #expect(first.exitStatus == 0, "\(first)")
        let total = try #require(first.standardOutput.split(separator: "\n").last.map(String.init))
        #expect(total.wholeMatch(of: /[1-9]\d* \(.+\) uploaded, 0 already there, in kiosk-cli-.+/) != nil, "\(total)")

        let again = try await ChildProcess.runKiosk(command, environment: Self.credentials)
        #expect(again.exitStatus == 0, "\(again)")
        let second = try #require(again.standardOutput.split(separator: "\n").last.map(String.init))
        #expect(second.wholeMatch(of: /0 uploaded, [1-9]\d* \(.+\) already there, in kiosk-cli-.+/) != nil, "\(second)")
    }

    @Test func withoutCredentialsItSaysWhichVariablesToSet() async throws {
        let outcome = try await ChildProcess.runKiosk(
            ["content", "push", TestServer.sampleContent.path, "--endpoint", "http://127.0.0.1:9", "--bucket", "b"],
            environment: ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""])
        #expect(outcome.exitStatus != 0)
        #expect(outcome.standardError.contains("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"), "\(outcome)")
    }

    @Test func aBadEndpointIsRefusedBeforeAnyUpload() async throws {
        let outcome = try await ChildProcess.runKiosk(
            ["content", "push", TestServer.sampleContent.path, "--endpoint", "ftp://example", "--bucket", "b"],
            environment: Self.credentials)
        #expect(outcome.exitStatus != 0)
        #expect(outcome.standardError.contains("an S3 endpoint is an http or https URL"), "\(outcome)")
    }
}
